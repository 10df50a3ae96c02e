/**
 * The router engine: an nginx master run by slipway as a child process, with its own
 * configuration, pid file, logs and temp paths under workDir (never /etc/nginx).
 *
 * apply() renders the whole table into a new file, checks it with `nginx -t`, swaps it in
 * with a rename and sends SIGHUP. nginx then starts workers on the new configuration and
 * lets the old ones finish their in-flight requests (drain) before they exit. apply()
 * resolves only once new connections are answered by the new configuration: the new
 * generation number is served on the control socket and every old worker has stopped
 * accepting.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startAttachedServer, type AttachedServer } from '../../src/executor/start-attached.js';
import { engineEnv, runEngineTool as run, stopGracefully, systemUserExists } from '../../src/router/engine-process.js';
import type { AccessRecord, Router, RoutingTable, TlsCertificate } from '../../src/router/router.js';
import { AccessLogTail, appOfHost, parseNginxAccessLine } from './access-log-tail.js';
import { nginxRunArgv, nginxTestArgv, type NginxCommandInput } from './commands.js';
import { nginxPaths, renderNginxConfig, validateWorkDir, type NginxPaths } from './config.js';
import { readGeneration } from './control.js';
import { childPids, processTitle, workerStoppedAccepting } from './proc.js';
import { validateIPv4, validatePort, validateTable, type ValidatedRoute } from '../../src/router/validate.js';

export interface NginxRouterOptions {
  /** IPv4 address to listen on, e.g. "0.0.0.0" or "127.0.0.1". */
  listenHost: string;
  port: number;
  /** Directory owned by the router: config, pid, logs/, tmp/ and control.sock live here. */
  workDir: string;
  /** Defaults to "nginx" looked up on PATH (Debian: /usr/sbin/nginx). */
  nginxBinary?: string;
  /** How long old workers may finish in-flight requests after a switch; default 60 s. */
  drainTimeoutSeconds?: number;
  /** User for worker processes when slipway runs as root; default www-data, else nobody. */
  workerUser?: string;
  /** How long start() and apply() wait for nginx to serve the new configuration; default 15 s. */
  readyTimeoutMs?: number;
  /** Called once per request forwarded to an app, read from nginx's access log (about a second late). */
  onRequest?: (record: AccessRecord) => void;
}

export class NginxRouter implements Router {
  private readonly listenHost: string;
  private readonly port: number;
  private readonly workDir: string;
  private readonly nginxBinary: string;
  private readonly drainTimeoutSeconds: number;
  private readonly readyTimeoutMs: number;
  private readonly paths: NginxPaths;
  private workerUser: string | undefined;
  private child: AttachedServer | undefined;
  private stderrTail = '';
  private generation = 0;
  private routes: ValidatedRoute[] = [];
  private queue: Promise<unknown> = Promise.resolve();
  private readonly onRequest: ((record: AccessRecord) => void) | undefined;
  private accessTail: AccessLogTail | undefined;

  constructor(options: NginxRouterOptions) {
    this.listenHost = validateIPv4(options.listenHost, 'Router listen address');
    this.port = validatePort(options.port, 'Router port');
    this.workDir = validateWorkDir(resolve(options.workDir));
    this.nginxBinary = options.nginxBinary ?? defaultNginxBinary();
    this.drainTimeoutSeconds = options.drainTimeoutSeconds ?? 60;
    this.readyTimeoutMs = options.readyTimeoutMs ?? 15_000;
    this.workerUser = options.workerUser;
    this.paths = nginxPaths(this.workDir);
    this.onRequest = options.onRequest;
  }

  /** Where the router listens, as given to the constructor. */
  get listening(): { host: string; port: number } {
    return { host: this.listenHost, port: this.port };
  }

  /** The configuration generation nginx serves once the last apply() resolved. */
  get currentGeneration(): number {
    return this.generation;
  }

  get logPaths(): { access: string; error: string } {
    return { access: this.paths.accessLog, error: this.paths.errorLog };
  }

  async start(): Promise<void> {
    if (this.child) throw new Error('The nginx router is already started; call stop() before starting it again.');
    await this.prepareWorkDir();
    await this.installConfig(renderNginxConfig(this.configInput(0, [])));

    const command = this.command();
    this.stderrTail = '';
    this.child = await startAttachedServer({
      argv: nginxRunArgv(command),
      cwd: '/',
      env: engineEnv(),
      onLine: (stream, line) => {
        if (stream === 'err') this.stderrTail = `${this.stderrTail}${line}\n`.slice(-4000);
      },
    });

    try {
      await this.waitForGeneration(0, []);
    } catch (error) {
      await this.stop().catch(() => undefined);
      throw error;
    }
    this.generation = 0;
    this.routes = [];
    const onRequest = this.onRequest;
    if (onRequest) {
      this.accessTail = new AccessLogTail(this.paths.accessLog, (line) => {
        const record = parseNginxAccessLine(line, (host) => appOfHost(this.routes, host));
        if (record) onRequest(record);
      });
      this.accessTail.start();
    }
  }

  apply(table: RoutingTable): Promise<void> {
    let routes: ValidatedRoute[];
    try {
      routes = validateTable(table);
    } catch (error) {
      return Promise.reject(error);
    }
    const run = this.queue.then(() => this.applyNow(routes));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** This engine is kept for comparison (bench/) and serves plain HTTP only. */
  async applyCertificates(certs: readonly TlsCertificate[]): Promise<void> {
    if (certs.length > 0) throw new Error('The nginx router engine serves plain HTTP only; certificates need the HAProxy engine.');
  }

  /** This engine does not outlive the daemon: letting go of it stops it. */
  async detach(): Promise<void> {
    await this.stop();
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    await this.queue;
    if (!child.exitStatus()) {
      // SIGQUIT: graceful; workers finish in-flight requests, bounded by worker_shutdown_timeout.
      await stopGracefully({ kill: (signal) => child.signal(signal) }, child.exited, 'SIGQUIT', this.drainTimeoutSeconds);
    }
    await child.exited;
    // nginx flushed its buffered log lines as it exited: hand them on, then stop following.
    this.accessTail?.stop();
    this.accessTail = undefined;
    this.child = undefined;
  }

  /**
   * Log rotation: after the caller renamed logs/*.log away, nginx (SIGUSR1) opens fresh
   * files. Resolves once the new access log exists.
   */
  async reopenLogs(): Promise<void> {
    this.assertRunning('reopen the logs');
    this.child!.signal('SIGUSR1');
    const deadline = Date.now() + this.readyTimeoutMs;
    while (!existsSync(this.paths.accessLog)) {
      if (Date.now() > deadline)
        throw new Error(`nginx did not reopen ${this.paths.accessLog} within ${this.readyTimeoutMs} ms. Check ${this.paths.errorLog}.`);
      await sleep(10);
    }
  }

  private async applyNow(routes: ValidatedRoute[]): Promise<void> {
    this.assertRunning('apply a routing table');
    const generation = this.generation + 1;
    await this.installConfig(renderNginxConfig(this.configInput(generation, routes)));
    const oldWorkers = childPids(this.child!.pid);
    this.child!.signal('SIGHUP');
    await this.waitForGeneration(generation, oldWorkers);
    this.generation = generation;
    this.routes = routes;
  }

  /** Waits until a fresh connection is served by `generation` and no old worker accepts. */
  private async waitForGeneration(generation: number, oldWorkers: number[]): Promise<void> {
    const deadline = Date.now() + this.readyTimeoutMs;
    let seen: number | undefined;
    while (Date.now() < deadline) {
      this.assertRunning(`switch to configuration generation ${generation}`);
      seen = await readGeneration(this.paths.controlSocket);
      if (seen === generation) break;
      await sleep(15);
    }
    if (seen !== generation) {
      throw new Error(
        `nginx did not start serving routing configuration generation ${generation} within ${this.readyTimeoutMs} ms ` +
          `(the control socket answered ${seen === undefined ? 'nothing' : `generation ${seen}`}). ` +
          `The previous routing stays in force. nginx's error log says: ${await this.errorLogTail()}`,
      );
    }
    for (const pid of oldWorkers) {
      while (!workerStoppedAccepting(pid)) {
        if (Date.now() > deadline) {
          throw new Error(
            `nginx worker ${pid} of the previous configuration still accepts connections ${this.readyTimeoutMs} ms after the reload (title: ${processTitle(pid)}).`,
          );
        }
        await sleep(5);
      }
    }
  }

  /** Writes the candidate beside the live file, checks it with `nginx -t`, then renames it in. */
  private async installConfig(text: string): Promise<void> {
    const candidate = `${this.paths.config}.next`;
    await writeFile(candidate, text, { mode: 0o600 });
    const check = await run(nginxTestArgv({ ...this.command(), configPath: candidate }));
    if (check.missing) {
      await unlink(candidate).catch(() => undefined);
      throw new Error(
        `nginx is not installed or not found (tried "${this.nginxBinary}"). Install the Debian package nginx-light ` +
          '(apt-get install -y nginx-light) or pass nginxBinary with the full path.',
      );
    }
    if (check.code !== 0) {
      await unlink(candidate).catch(() => undefined);
      throw new Error(
        `nginx refused the routing configuration (nginx -t exited ${check.code}): ${check.output.trim() || 'no output'}. ` +
          "The previous routing stays in force; this is a bug in slipway's configuration rendering or in the nginx install.",
      );
    }
    await rename(candidate, this.paths.config);
  }

  private configInput(generation: number, routes: ValidatedRoute[]) {
    return {
      workDir: this.workDir,
      listenHost: this.listenHost,
      port: this.port,
      generation,
      routes,
      workerUser: this.workerUser,
      drainTimeoutSeconds: this.drainTimeoutSeconds,
    };
  }

  private command(): NginxCommandInput {
    return { nginxBinary: this.nginxBinary, workDir: this.workDir, configPath: this.paths.config };
  }

  private async prepareWorkDir(): Promise<void> {
    await mkdir(dirname(this.paths.errorLog), { recursive: true });
    await mkdir(this.paths.tempRoot, { recursive: true, mode: 0o755 });
    await this.refuseStaleMaster();
    // A socket left by a master that died without cleaning up would make bind() fail.
    await unlink(this.paths.controlSocket).catch(() => undefined);
    if (process.getuid?.() === 0) {
      this.workerUser ??= (await systemUserExists('www-data')) ? 'www-data' : 'nobody';
      await this.letWorkersReachTempDir();
    }
  }

  private async refuseStaleMaster(): Promise<void> {
    const pidText = await readFile(this.paths.pid, 'utf8').catch(() => '');
    const pid = Number(pidText.trim());
    if (!Number.isInteger(pid) || pid <= 0) return;
    const title = processTitle(pid);
    if (title?.includes('nginx: master process') && title.includes(this.workDir)) {
      throw new Error(
        `An nginx master (pid ${pid}) from an earlier run still serves ${this.workDir}. ` +
          `Stop it with "kill -QUIT ${pid}" (or use another work directory), then start the router again.`,
      );
    }
  }

  /**
   * Workers run as an unprivileged user and buffer large bodies under tmp/, so every
   * directory above it must be searchable by that user. workDir is ours: give it o+x.
   * Ancestors are not ours to change: say which one blocks.
   */
  private async letWorkersReachTempDir(): Promise<void> {
    const workDirStat = await stat(this.workDir);
    if ((workDirStat.mode & 0o001) === 0) await chmod(this.workDir, (workDirStat.mode & 0o7777) | 0o001);
    for (let dir = dirname(this.workDir); ; dir = dirname(dir)) {
      const info = await stat(dir);
      if ((info.mode & 0o001) === 0) {
        throw new Error(
          `nginx's workers run as "${this.workerUser}" and cannot reach ${this.paths.tempRoot}: ${dir} has mode ` +
            `${(info.mode & 0o777).toString(8)} (no search permission for others). Run "chmod o+x ${dir}" or choose a router work directory elsewhere.`,
        );
      }
      if (dir === '/') break;
    }
  }

  private assertRunning(action: string): void {
    if (!this.child) throw new Error(`Cannot ${action}: the nginx router is not started. Call start() first.`);
    const exit = this.child.exitStatus();
    if (exit) {
      throw new Error(
        `Cannot ${action}: nginx exited (code ${exit.exitCode}, signal ${exit.signal}). ` +
          `It said: ${this.stderrTail.trim() || 'nothing on stderr'}. Check ${this.paths.errorLog}; ` +
          `a common cause is another process already listening on ${this.listenHost}:${this.port}.`,
      );
    }
  }

  private async errorLogTail(): Promise<string> {
    const log = await readFile(this.paths.errorLog, 'utf8').catch(() => '');
    const tail = log.trim().split('\n').slice(-5).join(' | ');
    return tail || this.stderrTail.trim() || `nothing (see ${this.paths.errorLog})`;
  }
}

/** Debian installs nginx in /usr/sbin, which is not on every user's PATH. */
function defaultNginxBinary(): string {
  return existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';
}
