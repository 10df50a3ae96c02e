/**
 * The default router engine: Debian's HAProxy in master-worker mode, run by slipway as a child
 * process, changed through its runtime API without reloading. A switch adds the new servers,
 * enables them, points the host maps at the app's backend, then puts the old servers in
 * maintenance (no new request; requests in flight finish) and deletes them once idle.
 * Certificates are swapped the same way (`set ssl cert` + `commit`), so open connections stay.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startAttachedServer, type AttachedServer } from '../../executor/start-attached.js';
import { engineEnv, runEngineTool as run, stopGracefully, systemUserExists } from '../engine-process.js';
import type { AccessRecord, Router, RouterOptions, RoutingTable, TlsCertificate, Upstream } from '../router.js';
import { noInstancePage, unknownHostPage, upstreamFailedPage } from '../pages.js';
import { validateCidr, validateIPv4, validatePort, validateTable, type ValidatedRoute } from '../validate.js';
import { AccessLogReceiver } from './access-log.js';
import { crtListLine, prepareCertificate, type PreparedCertificate } from './certificates.js';
import {
  haproxyPaths,
  renderHaproxyConfig,
  routerThreads,
  SERVER_OPTIONS,
  slotBackend,
  type HaproxyPaths,
  type HaproxyServer,
} from './config.js';
import { expectAnswer, runtimeCommand } from './runtime-api.js';
import { backendSessions } from './stats.js';
import { selfSignedCertificateArgv } from '../self-signed-argv.js';

export interface HaproxyRouterOptions extends RouterOptions {
  /** Defaults to /usr/sbin/haproxy when present, else "haproxy" on PATH. */
  haproxyBinary?: string;
  /** How long a removed server's requests in flight may run before they are cut; default 60 s. */
  drainTimeoutSeconds?: number;
  /** Backends made at start; more (a reload) only when the apps outgrow them. Default 128. */
  initialSlots?: number;
}

interface SlotState {
  appId: string;
  servers: HaproxyServer[];
}

const DEFAULT_CERT_NAME = 'slipway-default.invalid';

export class HaproxyRouter implements Router {
  private readonly o: HaproxyRouterOptions & { httpsPort: number; trustedProxies: string[] };
  private readonly paths: HaproxyPaths;
  private readonly binary: string;
  private readonly drainTimeoutSeconds: number;
  private child: AttachedServer | undefined;
  private stderrTail = '';
  private logs: AccessLogReceiver | undefined;
  /** DroppedLogs of the workers before the current one, and the current one's pid and count. */
  private droppedBefore = 0;
  private droppedNow: { pid: string; count: number } | undefined;
  private slots: number;
  private readonly slotOf = new Map<string, number>();
  private readonly slotState = new Map<number, SlotState>();
  /** Slots released, with when: reused only after a minute so late access log lines still name the right app. */
  private readonly freeSlots: Array<{ slot: number; since: number }> = [];
  private nextServer = 0;
  private readonly deleting = new Set<Promise<void>>();
  private certificates = new Map<string, PreparedCertificate>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: HaproxyRouterOptions) {
    validateIPv4(options.listenHost, 'Router listen address');
    validatePort(options.port, 'Router port');
    const httpsPort = options.httpsPort ? validatePort(options.httpsPort, 'Router HTTPS port') : 0;
    const trustedProxies = (options.trustedProxies ?? []).map((cidr) => validateCidr(cidr));
    this.o = { ...options, workDir: resolve(options.workDir), httpsPort, trustedProxies };
    this.paths = haproxyPaths(this.o.workDir);
    this.binary = options.haproxyBinary ?? (existsSync('/usr/sbin/haproxy') ? '/usr/sbin/haproxy' : 'haproxy');
    this.drainTimeoutSeconds = options.drainTimeoutSeconds ?? 60;
    this.slots = options.initialSlots ?? 128;
  }

  async start(): Promise<void> {
    if (this.child) throw new Error('The HAProxy router is already started; call stop() before starting it again.');
    await this.prepareWorkDir();
    let logPipe: number | undefined;
    if (this.o.onRequest) {
      const onRequest = this.o.onRequest;
      this.logs = new AccessLogReceiver(
        (backend) => this.appOfBackend(backend),
        (record: AccessRecord) => onRequest(record),
      );
      logPipe = await this.logs.open(this.o.workDir);
    }
    try {
      await this.writeConfig();
      await this.check();
    } catch (error) {
      // Nothing started: the pipe's ends are closed, not left open until the next start.
      this.logs?.stop();
      this.logs = undefined;
      throw error;
    }
    this.stderrTail = '';
    try {
      this.child = await startAttachedServer({
        // -dMglobal: HAProxy's process-wide pool cache, which Debian's build leaves off (it counts on
        // glibc's allocator). Buffers a thread's own cache cannot hold went back to malloc and free
        // at each request; with the global cache HAProxy spends about 0.8 µs less per small request.
        argv: [this.binary, '-W', '-db', '-dMglobal', '-f', this.paths.config],
        cwd: '/',
        env: engineEnv(),
        // The access log's pipe: the master passes it on to each worker, reloads included.
        fd3: logPipe,
        onLine: (stream, line) => {
          if (stream === 'err') this.stderrTail = `${this.stderrTail}${line}\n`.slice(-4000);
        },
      });
    } catch (error) {
      this.logs?.stop();
      this.logs = undefined;
      throw error;
    } finally {
      this.logs?.handedOver();
    }
    try {
      await this.waitForWorker(undefined);
    } catch (error) {
      await this.stop().catch(() => undefined);
      throw error;
    }
  }

  apply(table: RoutingTable): Promise<void> {
    let routes: ValidatedRoute[];
    try {
      routes = validateTable(table);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.serialized(() => this.applyNow(routes));
  }

  applyCertificates(certs: readonly TlsCertificate[]): Promise<void> {
    let prepared: PreparedCertificate[];
    try {
      prepared = certs.map((cert) => prepareCertificate(cert, this.paths.certDir));
    } catch (error) {
      return Promise.reject(error);
    }
    return this.serialized(() => this.applyCertificatesNow(prepared));
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    await this.queue.catch(() => undefined);
    if (!child.exitStatus()) {
      // SIGUSR1: soft stop; requests in flight finish, bounded by hard-stop-after.
      await stopGracefully({ kill: (signal) => child.signal(signal) }, child.exited, 'SIGUSR1', this.drainTimeoutSeconds);
    }
    await child.exited;
    this.child = undefined;
    // The last requests' lines may still wait in the pipe (the receiver rests between reads).
    await this.logs?.drain(1000);
    this.logs = undefined;
  }

  /** Client connections open now, as HAProxy counts them. */
  async activeConnections(): Promise<number | undefined> {
    if (!this.child) return undefined;
    const info = await runtimeCommand(this.paths.adminSocket, 'show info', undefined, 2000).catch(() => '');
    const match = /^CurrConns: (\d+)/m.exec(info);
    return match ? Number(match[1]) : undefined;
  }

  /**
   * Access records HAProxy dropped since the router started because the pipe to the daemon was
   * full (DroppedLogs), summed over the workers a reload replaced; undefined when not running.
   */
  async droppedAccessRecords(): Promise<number | undefined> {
    if (!this.child || !this.logs) return undefined;
    const info = await runtimeCommand(this.paths.adminSocket, 'show info', undefined, 2000).catch(() => '');
    const pid = /^Pid: (\d+)/m.exec(info)?.[1];
    const count = /^DroppedLogs: (\d+)/m.exec(info)?.[1];
    if (pid === undefined || count === undefined) return undefined;
    if (this.droppedNow && this.droppedNow.pid !== pid) this.droppedBefore += this.droppedNow.count;
    this.droppedNow = { pid, count: Number(count) };
    return this.droppedBefore + this.droppedNow.count;
  }

  /** Sessions each app's backend serves now (`show stat` scur), by app id: every routed app, 0 when idle. */
  async appConnections(): Promise<Map<string, number> | undefined> {
    if (!this.child) return undefined;
    const stat = await runtimeCommand(this.paths.adminSocket, 'show stat', undefined, 2000).catch(() => undefined);
    if (stat === undefined) return undefined;
    const byApp = new Map<string, number>();
    for (const [backend, sessions] of backendSessions(stat)) {
      const appId = this.appOfBackend(backend);
      if (appId !== undefined) byApp.set(appId, (byApp.get(appId) ?? 0) + sessions);
    }
    return byApp;
  }

  /** Resolves once every removed server has been deleted from HAProxy (tests). */
  async settled(): Promise<void> {
    await Promise.all([...this.deleting]);
  }

  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private appOfBackend(backend: string): string | undefined {
    const match = /^app(\d+)$/.exec(backend);
    return match ? this.slotState.get(Number(match[1]))?.appId : undefined;
  }

  private async applyNow(routes: ValidatedRoute[]): Promise<void> {
    this.assertRunning('apply a routing table');
    const byApp = new Map<string, { upstreams: Upstream[]; forceHttps: boolean; hosts: string[] }>();
    for (const route of routes) {
      const entry = byApp.get(route.appId) ?? { upstreams: [], forceHttps: false, hosts: [] };
      for (const upstream of route.upstreams) {
        if (!entry.upstreams.some((u) => u.address === upstream.address && u.port === upstream.port)) entry.upstreams.push(upstream);
      }
      entry.forceHttps ||= route.forceHttps;
      entry.hosts.push(route.host);
      byApp.set(route.appId, entry);
    }
    await this.releaseSlotsOfGoneApps(new Set(byApp.keys()));
    if (await this.growSlotsFor([...byApp.keys()])) return this.applyNow(routes);

    const retired: Array<{ slot: number; server: HaproxyServer }> = [];
    for (const [appId, entry] of byApp) {
      const slot = this.assignSlot(appId);
      const state = this.slotState.get(slot)!;
      const backend = slotBackend(slot);
      for (const upstream of entry.upstreams) {
        if (state.servers.some((s) => s.address === upstream.address && s.port === upstream.port)) continue;
        const server: HaproxyServer = { name: `i${this.nextServer++}`, address: upstream.address, port: upstream.port };
        await expectAnswer(
          this.paths.adminSocket,
          `add server ${backend}/${server.name} ${server.address}:${server.port} ${SERVER_OPTIONS}`,
          /New server registered/,
        );
        // Dynamic servers start in maintenance.
        await runtimeCommand(this.paths.adminSocket, `enable server ${backend}/${server.name}`);
        state.servers.push(server);
      }
      for (const server of [...state.servers]) {
        if (entry.upstreams.some((u) => u.address === server.address && u.port === server.port)) continue;
        state.servers = state.servers.filter((s) => s !== server);
        retired.push({ slot, server });
      }
    }
    // The hosts point at backends whose new servers are up before any old one stops taking requests.
    await this.replaceMap(
      this.paths.hostsMap,
      routes.filter((r) => !r.host.startsWith('*.')).map((r) => [r.host, slotBackend(this.slotOf.get(r.appId)!)]),
    );
    await this.replaceMap(
      this.paths.wildcardMap,
      routes
        .filter((r) => r.host.startsWith('*.'))
        .map((r): [string, string] => [r.host.slice(1), slotBackend(this.slotOf.get(r.appId)!)])
        // map_end takes the first entry that matches: the most specific suffix must come first.
        .sort((a, b) => b[0].length - a[0].length),
    );
    // Without an HTTPS listener there is nowhere to redirect to: the configuration has no such map.
    if (this.o.httpsPort)
      await this.replaceMap(
        this.paths.forceHttpsMap,
        [...byApp].filter(([, e]) => e.forceHttps).map(([appId]) => [slotBackend(this.slotOf.get(appId)!), '1']),
      );
    for (const { slot, server } of retired) {
      await runtimeCommand(this.paths.adminSocket, `set server ${slotBackend(slot)}/${server.name} state maint`);
      this.deleteWhenIdle(slot, server);
    }
  }

  /** Apps no longer in the table give their backend back (their servers drain like any removed server). */
  private async releaseSlotsOfGoneApps(present: Set<string>): Promise<void> {
    for (const [appId, slot] of [...this.slotOf]) {
      if (present.has(appId)) continue;
      const state = this.slotState.get(slot)!;
      for (const server of state.servers) {
        await runtimeCommand(this.paths.adminSocket, `set server ${slotBackend(slot)}/${server.name} state maint`);
        this.deleteWhenIdle(slot, server);
      }
      state.servers = [];
      this.slotOf.delete(appId);
      this.freeSlots.push({ slot, since: Date.now() });
    }
  }

  private assignSlot(appId: string): number {
    const known = this.slotOf.get(appId);
    if (known !== undefined) return known;
    const used = new Set(this.slotOf.values());
    const pending = new Set(this.freeSlots.map((f) => f.slot));
    let slot = [...Array(this.slots).keys()].find((s) => !used.has(s) && !pending.has(s));
    if (slot === undefined) {
      const reusable = this.freeSlots.findIndex((f) => Date.now() - f.since > 60_000);
      const index = reusable >= 0 ? reusable : 0;
      slot = this.freeSlots.splice(index, 1)[0]!.slot;
    }
    this.slotOf.set(appId, slot);
    this.slotState.set(slot, { appId, servers: this.slotState.get(slot)?.servers ?? [] });
    return slot;
  }

  /**
   * More apps than backends: the only change that needs a reload. The new configuration holds
   * twice the backends and today's servers; the old process closes idle keep-alive connections
   * after their next response (idle-close-on-response) and finishes what it serves.
   */
  private async growSlotsFor(appIds: string[]): Promise<boolean> {
    const needed = appIds.filter((id) => !this.slotOf.has(id)).length + this.slotOf.size + this.freeSlots.length;
    if (needed <= this.slots) return false;
    while (this.slots < needed) this.slots *= 2;
    await this.settled();
    await this.writeConfig();
    await this.check();
    const oldPid = await this.workerPid();
    this.child!.signal('SIGUSR2');
    await this.waitForWorker(oldPid);
    return true;
  }

  private deleteWhenIdle(slot: number, server: HaproxyServer): void {
    const name = `${slotBackend(slot)}/${server.name}`;
    const work = (async () => {
      const deadline = Date.now() + this.drainTimeoutSeconds * 1000;
      for (;;) {
        if (!this.child) return;
        const answer = await runtimeCommand(this.paths.adminSocket, `del server ${name}`).catch((e: Error) => e.message);
        if (/Server deleted|No such server/i.test(answer)) return;
        if (Date.now() > deadline) await runtimeCommand(this.paths.adminSocket, `shutdown sessions server ${name}`).catch(() => '');
        await sleep(250);
      }
    })();
    this.deleting.add(work);
    void work.finally(() => this.deleting.delete(work));
  }

  /** Replaces a whole map atomically (prepare, fill the new version, commit) and keeps the file in step for reloads. */
  private async replaceMap(path: string, entries: Array<[string, string]>): Promise<void> {
    const prepared = await expectAnswer(this.paths.adminSocket, `prepare map ${path}`, /New version created: \d+/);
    const version = /New version created: (\d+)/.exec(prepared)![1];
    for (let i = 0; i < entries.length; i += 200) {
      const payload = entries
        .slice(i, i + 200)
        .map(([k, v]) => `${k} ${v}`)
        .join('\n');
      await runtimeCommand(this.paths.adminSocket, `add map @${version} ${path}`, payload).then((answer) => {
        if (answer) throw new Error(`HAProxy refused entries of ${path}: ${answer.split('\n')[0]}`);
      });
    }
    await runtimeCommand(this.paths.adminSocket, `commit map @${version} ${path}`);
    await writeFile(path, entries.map(([k, v]) => `${k} ${v}\n`).join(''), { mode: 0o600 });
  }

  private async applyCertificatesNow(certs: PreparedCertificate[]): Promise<void> {
    this.assertRunning('apply certificates');
    if (!this.o.httpsPort) throw new Error('The router has no HTTPS port (--https-port 0): certificates cannot be served.');
    const wanted = new Map(certs.map((c) => [c.file, c]));
    for (const cert of wanted.values()) {
      const current = this.certificates.get(cert.file);
      if (current?.pem === cert.pem) continue;
      if (!current) await expectAnswer(this.paths.adminSocket, `new ssl cert ${cert.file}`, /New empty certificate store/);
      const set = await runtimeCommand(this.paths.adminSocket, `set ssl cert ${cert.file}`, cert.pem);
      if (!/Transaction (created|updated)/.test(set)) {
        await runtimeCommand(this.paths.adminSocket, `abort ssl cert ${cert.file}`).catch(() => '');
        if (!current) await runtimeCommand(this.paths.adminSocket, `del ssl cert ${cert.file}`).catch(() => '');
        throw new Error(
          `HAProxy refused the certificate for ${cert.names.join(', ')}: ${set.split('\n')[0]}. The certificates served before stay in force.`,
        );
      }
      await expectAnswer(this.paths.adminSocket, `commit ssl cert ${cert.file}`, /Success/);
      await writeFile(cert.file, cert.pem, { mode: 0o600 });
      if (!current) await expectAnswer(this.paths.adminSocket, `add ssl crt-list ${this.paths.certList}`, /Success/, crtListLine(cert));
      this.certificates.set(cert.file, cert);
    }
    for (const file of [...this.certificates.keys()]) {
      if (wanted.has(file)) continue;
      await expectAnswer(this.paths.adminSocket, `del ssl crt-list ${this.paths.certList} ${file}`, /deleted|Success/i);
      await runtimeCommand(this.paths.adminSocket, `del ssl cert ${file}`);
      this.certificates.delete(file);
      await unlink(file).catch(() => undefined);
    }
    await this.writeCertList();
  }

  private async writeCertList(): Promise<void> {
    const lines = [this.paths.defaultCert, ...[...this.certificates.values()].map(crtListLine)];
    await writeFile(this.paths.certList, lines.join('\n') + '\n', { mode: 0o600 });
  }

  private async writeConfig(): Promise<void> {
    const servers = new Map([...this.slotState].map(([slot, state]) => [slot, state.servers]));
    const text = renderHaproxyConfig({
      workDir: this.o.workDir,
      listenHost: this.o.listenHost,
      port: this.o.port,
      httpsPort: this.o.httpsPort,
      trustedProxies: this.o.trustedProxies,
      acmeChallenge: this.o.acmeChallenge,
      accessLog: this.logs !== undefined,
      slots: this.slots,
      servers,
      drainTimeoutSeconds: this.drainTimeoutSeconds,
      user: process.getuid?.() === 0 && (await systemUserExists('haproxy')) ? 'haproxy' : undefined,
      threads: routerThreads(availableParallelism()),
    });
    await writeFile(this.paths.config, text, { mode: 0o600 });
  }

  private async check(): Promise<void> {
    const result = await run([this.binary, '-c', '-f', this.paths.config]);
    if (result.missing)
      throw new Error(
        `HAProxy is not installed (tried "${this.binary}"). Install the Debian package haproxy (apt-get install -y haproxy).`,
      );
    if (result.code !== 0)
      throw new Error(
        `HAProxy refused the router configuration: ${result.output
          .trim()
          .split('\n')
          .filter((l) => l.includes('ALERT'))
          .slice(0, 5)
          .join(' | ')}`,
      );
  }

  /** Everything HAProxy reads lives in the work folder, root's alone (it holds private keys). */
  private async prepareWorkDir(): Promise<void> {
    await mkdir(this.o.workDir, { recursive: true, mode: 0o700 });
    await chmod(this.o.workDir, 0o700);
    await unlink(this.paths.adminSocket).catch(() => undefined);
    // The platform applies its certificates again after a start: none is left from an earlier run.
    await rm(this.paths.certDir, { recursive: true, force: true });
    await mkdir(this.paths.certDir, { mode: 0o700 });
    await mkdir(this.paths.pagesDir, { recursive: true, mode: 0o700 });
    await writeFile(join(this.paths.pagesDir, '404.html'), unknownHostPage());
    for (const [status, reason, body] of [
      [503, 'Service Unavailable', noInstancePage()],
      [502, 'Bad Gateway', upstreamFailedPage(502)],
      [504, 'Gateway Timeout', upstreamFailedPage(504)],
    ] as const) {
      const extra = status === 503 ? 'retry-after: 5\r\n' : '';
      const head = `HTTP/1.1 ${status} ${reason}\r\ncontent-type: text/html; charset=utf-8\r\ncache-control: no-store\r\n${extra}content-length: ${Buffer.byteLength(body)}\r\n\r\n`;
      await writeFile(join(this.paths.pagesDir, `${status}.http`), head + body);
    }
    for (const map of [this.paths.hostsMap, this.paths.wildcardMap, this.paths.forceHttpsMap]) await writeFile(map, '', { mode: 0o600 });
    if (!existsSync(this.paths.defaultCert)) await makeDefaultCertificate(this.paths.defaultCert);
    this.certificates = new Map();
    await this.writeCertList();
    for (const entry of await readdir(this.o.workDir)) {
      if (entry.endsWith('.tmp')) await unlink(join(this.o.workDir, entry)).catch(() => undefined);
    }
  }

  private async workerPid(): Promise<string | undefined> {
    const info = await runtimeCommand(this.paths.adminSocket, 'show info', undefined, 2000).catch(() => '');
    return /^Pid: (\d+)/m.exec(info)?.[1];
  }

  /** Waits until a worker (another one than `oldPid` after a reload) answers on the admin socket. */
  private async waitForWorker(oldPid: string | undefined): Promise<void> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      this.assertRunning('start HAProxy');
      const pid = await this.workerPid();
      if (pid && pid !== oldPid) return;
      if (Date.now() > deadline)
        throw new Error(`HAProxy did not start serving within 15 s. It said: ${this.stderrTail.trim() || 'nothing'}`);
      await sleep(20);
    }
  }

  private assertRunning(action: string): void {
    const child = this.child;
    if (!child) throw new Error(`Cannot ${action}: the HAProxy router is not started. Call start() first.`);
    const exit = child.exitStatus();
    if (exit) {
      throw new Error(
        `Cannot ${action}: HAProxy exited (code ${exit.exitCode}, signal ${exit.signal}). It said: ${this.stderrTail.trim() || 'nothing'}. ` +
          `A common cause is another process listening on ${this.o.listenHost}:${this.o.port}${this.o.httpsPort ? ` or :${this.o.httpsPort}` : ''}.`,
      );
    }
  }
}

/** A self-signed certificate for names nobody has a certificate for (clients see a warning, never another app's certificate). */
async function makeDefaultCertificate(path: string): Promise<void> {
  const key = `${path}.key.tmp`;
  const cert = `${path}.crt.tmp`;
  const result = await run(selfSignedCertificateArgv({ subject: DEFAULT_CERT_NAME, days: 3650, keyFile: key, certFile: cert }));
  if (result.code !== 0) throw new Error(`Could not make the router's default certificate with openssl: ${result.output.trim()}`);
  const pem = (await readFile(cert, 'utf8')) + (await readFile(key, 'utf8'));
  await writeFile(path, pem, { mode: 0o600 });
  await unlink(key);
  await unlink(cert);
}
