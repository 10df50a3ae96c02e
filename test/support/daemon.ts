import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { runCli, SLIPWAY_BIN, type CliResult } from './cli.js';
import { removeAppUsersAtExit } from './app-users-cleanup.js';

export interface TestDaemon {
  dataDir: string;
  apiUrl: string;
  apiPort: number;
  sshPort: number;
  routerPort: number;
  /** The router's HTTPS port. */
  httpsPort: number;
  /** The instances' subnet, 10.<n>.0.0/16 (bridge slipway<n>). */
  subnet: string;
  adminToken: string;
  /** Process id of the daemon (for /proc/<pid>/status). */
  pid(): number;
  /** Output of the daemon so far. */
  output(): string;
  /** Runs the CLI logged in as the given token (default: admin). */
  cli(
    args: string[],
    options?: { cwd?: string; stdin?: string; token?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
  ): Promise<CliResult>;
  /**
   * Stops everything with `slipway system stop` (apps, add-on servers, router, then the daemon)
   * and waits for the daemon to exit; a daemon no longer running is started first, so what it
   * left serving is stopped too.
   */
  stop(options?: { token?: string }): Promise<number | null>;
  /** Sends SIGTERM or SIGINT (the daemon alone stops; the data plane goes on) and waits for it to exit. */
  terminate(signal?: 'SIGTERM' | 'SIGINT'): Promise<number | null>;
  /** Kills the daemon with SIGKILL (a crash: nothing of its own clean-up runs) and waits for it to exit. */
  kill(): Promise<void>;
  /**
   * Starts it again on the same data folder and ports (with `bin`: another build of slipway, an
   * upgrade; with `subnet`: another --subnet; with `extraArgs`: other flags).
   */
  restart(options?: { bin?: string; subnet?: string; extraArgs?: string[] }): Promise<void>;
}

function waitForLine(child: ChildProcess, pattern: RegExp, collected: () => string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`daemon did not print ${pattern} within ${timeoutMs} ms:\n${collected()}`)), timeoutMs);
    const check = () => {
      if (pattern.test(collected())) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stderr!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`daemon exited with ${code} before being ready:\n${collected()}`));
    });
    check();
  });
}

/** Starts a real `slipway server` on free ports in a temporary data folder. */
export async function startDaemon(
  extraArgs: string[] = [],
  options: { bin?: string; emptyDataFolder?: boolean; dataDir?: string; egressLoopback?: boolean } = {},
): Promise<TestDaemon> {
  let bin = options.bin ?? SLIPWAY_BIN;
  // `dataDir`: a folder the test made (on a filesystem of its own, say); else a fresh one.
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'slipway-test-'));
  removeAppUsersAtExit(dataDir, { removeFolder: options.dataDir === undefined });
  // With emptyDataFolder (a daemon started by --restore-from, which wants it empty) the CLI's
  // configuration lives in a folder of its own.
  const configHome = options.emptyDataFolder ? mkdtempSync(join(tmpdir(), 'slipway-client-')) : join(dataDir, 'client-config');
  if (!options.emptyDataFolder) mkdirSync(configHome);
  const drawPorts = async () => [await freePort(), await freePort(), await freePort(), await freePort()] as const;
  let [apiPort, sshPort, routerPort, httpsPort] = await drawPorts();
  // The embedded PostgreSQL's port too (5433 unless told): a test daemon beside another must not
  // find it taken. Kept across restarts, as an operator's setting is.
  const postgresPort = process.env.SLIPWAY_POSTGRES_PORT ?? String(await freePort());
  // A subnet of its own, so a test daemon never touches a running platform's network; drawn
  // again when another daemon of this machine (a test run beside this one) holds it.
  // A subnet whose bridge exists belongs to a daemon that stopped while its instances serve on
  // (it will restart on it): drawn again, or that restart would find its subnet taken.
  const drawSubnet = (): string => {
    for (;;) {
      const n = 120 + Math.floor(Math.random() * 80);
      if (spawnSync('ip', ['link', 'show', `slipway${n}`], { stdio: 'ignore' }).status !== 0) return `10.${n}.0.0/16`;
    }
  };
  let subnet = drawSubnet();
  // Toolchains are shared between test daemons (and runs) so each Node is fetched once per machine.
  const toolchainCache = process.env.SLIPWAY_TOOLCHAIN_CACHE ?? '/var/cache/slipway-test/toolchains';
  let child: ChildProcess;
  let log = '';
  const launch = async (relaunch: { bin?: string; subnet?: string; extraArgs?: string[] } = {}) => {
    bin = relaunch.bin ?? bin;
    extraArgs = relaunch.extraArgs ?? extraArgs;
    subnet = relaunch.subnet ?? subnet;
    log = '';
    child = spawn(
      process.execPath,
      [
        bin,
        'server',
        '--data-dir',
        dataDir,
        '--api-port',
        String(apiPort),
        '--ssh-port',
        String(sshPort),
        '--router-port',
        String(routerPort),
        '--https-port',
        String(httpsPort),
        '--subnet',
        subnet,
        '--toolchain-cache',
        toolchainCache,
        // The test receivers (webhooks, drains, SMTP, S3, ACME, DNS) listen on loopback, which
        // the daemon's egress guard refuses unless the operator allows it, as here (an earlier
        // build, an upgrade test's, takes IPv4 ranges only).
        ...(options.egressLoopback === false
          ? []
          : ['--egress-allow', '127.0.0.0/8', ...(bin === SLIPWAY_BIN ? ['--egress-allow', '::1/128'] : [])]),
        ...extraArgs,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SLIPWAY_POSTGRES_PORT: postgresPort } },
    );
    child.stdout!.on('data', (d) => (log += d));
    child.stderr!.on('data', (d) => (log += d));
    await waitForLine(child, /slipway is ready/, () => log, 120_000);
  };
  for (let attempt = 1; ; attempt++) {
    try {
      await launch();
      break;
    } catch (error) {
      // Another process (a test file running beside this one) may take a port between its draw and the daemon's bind.
      const portTaken = /Address already in use|EADDRINUSE/.test(String(error));
      if (attempt >= 5 || !(portTaken || /already runs its apps on the subnet/.test(String(error)))) throw error;
      if (portTaken) [apiPort, sshPort, routerPort, httpsPort] = await drawPorts();
      else subnet = drawSubnet();
    }
  }
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const adminToken = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  const daemon: TestDaemon = {
    dataDir,
    apiUrl,
    apiPort,
    sshPort,
    routerPort,
    httpsPort,
    get subnet() {
      return subnet;
    },
    adminToken,
    pid: () => child.pid!,
    output: () => log,
    cli: async (args, options = {}) =>
      withApiErrors(
        await runCli(args, {
          cwd: options.cwd,
          stdin: options.stdin,
          timeoutMs: options.timeoutMs,
          env: {
            ...process.env,
            XDG_CONFIG_HOME: configHome,
            SLIPWAY_URL: apiUrl,
            SLIPWAY_TOKEN: options.token ?? adminToken,
            ...options.env,
          },
        }),
        () => log,
      ),
    // `token`: an administrator's, for a test that revoked the first-start one.
    stop: async (options = {}) => {
      if (child.exitCode !== null || child.signalCode !== null) {
        try {
          await launch();
        } catch {
          return child.exitCode;
        }
      }
      const exited = new Promise<number | null>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
      });
      const result = await daemon.cli(['system', 'stop', '--yes'], { timeoutMs: 120_000, token: options.token });
      // A daemon that cannot answer (it failed while starting) is stopped the old way.
      if (result.code !== 0) child.kill('SIGTERM');
      const code = await exited;
      warnIfNetworkLeft(subnet, dataDir, result);
      return code;
    },
    terminate: (signal = 'SIGTERM') =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill(signal);
      }),
    kill: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
    restart: launch,
  };
  return daemon;
}

/**
 * A stopped platform leaves no firewall table behind (`system stop` removes it). When one is
 * left, the run says which daemon (and so which test) it was, and what its stop answered:
 * a table left by every run would otherwise pile up on the machine unexplained.
 */
function warnIfNetworkLeft(subnet: string, dataDir: string, stop: CliResult): void {
  const table = `slipway${subnet.split('.')[1]}`;
  const left = spawnSync('nft', ['list', 'table', 'inet', table], { stdio: 'ignore' }).status === 0;
  if (!left) return;
  process.stderr.write(
    `warning: the test daemon of ${dataDir} left its firewall table ${table} after its stop ` +
      `(system stop exited ${stop.code}: ${stop.stderr.trim().slice(0, 500)})\n`,
  );
}

/**
 * An internal error tells the CLI only to read the daemon's output: the stack the daemon printed
 * ("API error: …") goes into the result's stderr, so the failed assertion quoting it says why.
 */
function withApiErrors(result: CliResult, daemonOutput: () => string): CliResult {
  if (!result.stderr.includes('Internal error in the slipway daemon')) return result;
  const stacks = daemonOutput()
    .split(/\n(?=\S)/)
    .filter((entry) => entry.startsWith('API error: '))
    .slice(-2);
  return { ...result, stderr: `${result.stderr}\n--- the daemon's last API errors:\n${stacks.join('\n')}` };
}
