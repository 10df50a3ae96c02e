/**
 * The default router engine: Debian's HAProxy in master-worker mode, changed through its runtime
 * API without reloading. A switch adds the new servers, enables them, points the host maps at
 * the app's backend, then puts the old servers in maintenance (no new request; requests in
 * flight finish) and deletes them once idle. Certificates are swapped the same way (`set ssl
 * cert` + `commit`), so open connections stay.
 *
 * HAProxy outlives the daemon: a supervisor of its own (supervisor.ts) runs it and starts it
 * again at once when it dies, from files this class keeps in step after every change (the
 * configuration with every server, the maps, the crt-list and certificates) plus a small state
 * (router-state.ts) the next daemon adopts: `start()` finds a live supervisor and reconciles
 * instead of starting afresh, `detach()` lets go of it, `stop()` ends both.
 */
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rm, truncate, unlink, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { engineEnv, runEngineTool as run, systemUserExists } from '../engine-process.js';
import type { AccessRecord, Router, RouterOptions, RoutingTable, TlsCertificate, Upstream } from '../router.js';
import { noInstancePage, unknownHostPage, upstreamFailedPage } from '../pages.js';
import { validateCidr, validateIPv4, validatePort, validateTable, type ValidatedRoute } from '../validate.js';
import { AccessLogReceiver, makeAccessPipe } from './access-log.js';
import {
  CertificateRefused,
  CertificatesPartlyApplied,
  certificateFileOf,
  crtListLine,
  prepareCertificate,
  type CertificateRefusal,
  type PreparedCertificate,
} from './certificates.js';
import {
  haproxyPaths,
  renderHaproxyConfig,
  routerThreads,
  SERVER_OPTIONS,
  slotBackend,
  type HaproxyPaths,
  type HaproxyServer,
} from './config.js';
import { expectAnswer, runtimeCommand, RuntimeApiError } from './runtime-api.js';
import { backendSessions, crtListFiles, runningServers } from './stats.js';
import { loadRouterState, saveRouterState, writeFileAtomically, type RouterState } from './router-state.js';
import { describeExit, isAlive, liveSupervisor, readExits, type EngineExit, type SupervisorRecord } from './supervisor-files.js';
import { fileSize, outputSince, signalSupervisor, startSupervisor, stopSupervisor } from './supervisor-control.js';
import { selfSignedCertificateArgv } from '../self-signed-argv.js';

export interface HaproxyRouterOptions extends RouterOptions {
  /** Defaults to /usr/sbin/haproxy when present, else "haproxy" on PATH. */
  haproxyBinary?: string;
  /** How long a removed server's requests in flight may run before they are cut; default 60 s. */
  drainTimeoutSeconds?: number;
  /** Backends made at start; more (a reload) only when the apps outgrow them. Default 128. */
  initialSlots?: number;
  /** The daemon's output: a router adopted, a death of HAProxy, its supervisor started again. */
  log?: (line: string) => void;
  /** Each death of HAProxy its supervisor recorded (those while no daemon ran are told at the next start). */
  onEngineRestart?: (exit: EngineExit) => void;
}

interface SlotState {
  appId: string;
  servers: HaproxyServer[];
}

const DEFAULT_CERT_NAME = 'slipway-default.invalid';

/** How often the daemon looks at its supervisor (/proc) and at the record of HAProxy's deaths (a stat). */
const WATCH_INTERVAL_MS = 250;

/** supervisor.log is emptied once it is this long (HAProxy notes each runtime change there), at a start and once a minute. */
const SUPERVISOR_LOG_LIMIT = 1024 * 1024;

export class HaproxyRouter implements Router {
  private readonly o: HaproxyRouterOptions & { httpsPort: number; trustedProxies: string[] };
  private readonly paths: HaproxyPaths;
  private readonly binary: string;
  private readonly drainTimeoutSeconds: number;
  private readonly log: (line: string) => void;
  /** The supervisor this daemon talks to; undefined before start() and after detach() or stop(). */
  private supervisor: SupervisorRecord | undefined;
  private watcher: NodeJS.Timeout | undefined;
  private recovering = false;
  /** Bytes of exits.jsonl reported so far. */
  private exitsReported = 0;
  private workerUser: string | undefined | null = null;
  private logs: AccessLogReceiver | undefined;
  /** DroppedLogs of the workers before the current one, and the current one's pid and count. */
  private droppedBefore = 0;
  private droppedNow: { pid: string; count: number } | undefined;
  private slots: number;
  private readonly slotOf = new Map<string, number>();
  private readonly slotState = new Map<number, SlotState>();
  /** Slots released, with when: reused only after a minute so late access log lines still name the right app. */
  private freeSlots: Array<{ slot: number; since: number }> = [];
  private nextServer = 0;
  private readonly deleting = new Set<Promise<void>>();
  private certificates = new Map<string, PreparedCertificate>();
  /** The entries of each map as last committed (what its file holds). */
  private readonly maps = new Map<string, Array<[string, string]>>();
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
    this.log = options.log ?? (() => undefined);
  }

  /** Adopts the router a previous daemon left running on this work folder, or starts one afresh. */
  async start(): Promise<void> {
    if (this.supervisor) throw new Error('The HAProxy router is already started; call stop() before starting it again.');
    await mkdir(this.o.workDir, { recursive: true, mode: 0o700 });
    await chmod(this.o.workDir, 0o700);
    await this.trimSupervisorLog();
    const live = liveSupervisor(this.paths.holderPid);
    const state = loadRouterState(this.paths.state);
    let adopted = false;
    if (live && state) {
      try {
        await this.adopt(live, state);
        adopted = true;
      } catch (error) {
        // A HAProxy that does not answer (one that keeps dying: a port taken) or refuses the
        // state: a fresh start says why in its own words, or serves again.
        this.log(`Could not adopt the router left running (supervisor pid ${live.pid}): ${(error as Error).message}`);
        this.forgetState();
      }
    }
    if (!adopted) {
      if (live) {
        this.log(`Stopping the router's supervisor (pid ${live.pid}) and starting the router afresh.`);
        await stopSupervisor(live, (this.drainTimeoutSeconds + 15) * 1000);
      }
      await this.startFresh(state);
    }
    this.watch();
  }

  /** Back to what the constructor made, after an adoption that failed half-way. */
  private forgetState(): void {
    this.supervisor = undefined;
    this.logs?.stop();
    this.logs = undefined;
    this.slots = this.o.initialSlots ?? 128;
    this.slotOf.clear();
    this.slotState.clear();
    this.freeSlots = [];
    this.nextServer = 0;
    this.certificates = new Map();
    this.maps.clear();
    this.droppedBefore = 0;
    this.droppedNow = undefined;
  }

  private async startFresh(previous: RouterState | undefined): Promise<void> {
    // Deaths a supervisor recorded that no daemon reported yet: told before the record is wiped.
    this.exitsReported = Math.max(this.exitsReported, previous?.exitsReported ?? 0);
    this.reportExits();
    await this.prepareWorkDir();
    await makeAccessPipe(this.paths.accessPipe);
    await this.writeConfig();
    await this.check();
    const logStart = fileSize(this.paths.holderLog);
    this.supervisor = await this.launchSupervisor();
    try {
      await this.waitForWorker(undefined, logStart);
    } catch (error) {
      await this.stop().catch(() => undefined);
      throw error;
    }
    this.openAccessLog();
    await this.saveState();
  }

  /** Takes over a running router: its state loaded, nothing wiped, HAProxy brought in line with the state. */
  private async adopt(live: SupervisorRecord, state: RouterState): Promise<void> {
    this.supervisor = live;
    this.loadState(state);
    for (const map of this.mapPaths()) this.maps.set(map, await readMapFile(map));
    await this.waitForWorker(undefined, undefined);
    this.reportExits();
    this.openAccessLog();
    await this.matchConfiguration();
    await this.reconcile();
    const servers = [...this.slotOf.values()].reduce((n, slot) => n + (this.slotState.get(slot)?.servers.length ?? 0), 0);
    this.log(
      `Adopted the router left running (supervisor pid ${live.pid}): ${this.slotOf.size} app(s), ${servers} server(s), ${this.certificates.size} certificate(s).`,
    );
  }

  private haproxyArgv(): string[] {
    // -dMglobal: HAProxy's process-wide pool cache, which Debian's build leaves off (it counts on
    // glibc's allocator). Buffers a thread's own cache cannot hold went back to malloc and free
    // at each request; with the global cache HAProxy spends about 0.8 µs less per small request.
    return [this.binary, '-W', '-db', '-dMglobal', '-f', this.paths.config];
  }

  private openAccessLog(): void {
    const onRequest = this.o.onRequest;
    if (!onRequest) return;
    this.logs = new AccessLogReceiver(
      (backend) => this.appOfBackend(backend),
      (record: AccessRecord) => onRequest(record),
    );
    this.logs.open(this.paths.accessPipe);
  }

  apply(table: RoutingTable): Promise<void> {
    let routes: ValidatedRoute[];
    try {
      routes = validateTable(table);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.serialized(() => this.acrossRestarts(() => this.applyNow(routes)));
  }

  /**
   * Each certificate stands alone: one that cannot be read or that HAProxy refuses is left out
   * (the one served before for its names stays), the others are applied, and the call then
   * rejects naming the refused ones.
   */
  applyCertificates(certs: readonly TlsCertificate[]): Promise<void> {
    const prepared: PreparedCertificate[] = [];
    const refused: CertificateRefusal[] = [];
    for (const cert of certs) {
      try {
        prepared.push(prepareCertificate(cert, this.paths.certDir));
      } catch (error) {
        refused.push({
          file: certificateFileOf(cert, this.paths.certDir),
          names: Array.isArray(cert.names) ? cert.names.map(String) : [],
          reason: (error as Error).message,
        });
      }
    }
    return this.serialized(() => this.acrossRestarts(() => this.applyCertificatesNow(prepared, refused)));
  }

  /**
   * A change that met HAProxy being started again (its admin socket refused or closed on us) is
   * made again once it answers, after it was brought in line with what this object holds: the
   * caller (a deployment's switch) does not fail for a death the supervisor repaired.
   */
  private async acrossRestarts(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      if (!isConnectionError(error)) throw error;
      await this.waitForWorker(undefined, undefined);
      await this.reconcile();
      await work();
    }
  }

  /** Drains and stops HAProxy and its supervisor (`slipway system stop`). */
  async stop(): Promise<void> {
    if (!this.supervisor) return;
    this.stopWatching();
    await this.queue.catch(() => undefined);
    // Read after the queue: a supervisor started again meanwhile is the one to stop.
    const supervisor = this.supervisor;
    // SIGUSR1: the supervisor soft-stops HAProxy (requests in flight finish, bounded by hard-stop-after), then exits.
    if (supervisor) await stopSupervisor(supervisor, (this.drainTimeoutSeconds + 15) * 1000);
    this.supervisor = undefined;
    // The last requests' lines may still wait in the pipe (the receiver rests between reads).
    await this.logs?.drain(1000);
    this.logs = undefined;
  }

  /** The daemon lets go: HAProxy and its supervisor go on serving, and the next daemon's start() adopts them. */
  async detach(): Promise<void> {
    if (!this.supervisor) return;
    this.stopWatching();
    await this.queue.catch(() => undefined);
    await this.saveState().catch((error: Error) => this.log(`Could not save the router's state: ${error.message}`));
    this.logs?.stop();
    this.logs = undefined;
    // Servers being drained stay in maintenance; the next daemon deletes them (reconcile).
    this.supervisor = undefined;
  }

  /** Client connections open now, as HAProxy counts them. */
  async activeConnections(): Promise<number | undefined> {
    if (!this.supervisor) return undefined;
    const info = await runtimeCommand(this.paths.adminSocket, 'show info', undefined, 2000).catch(() => '');
    const match = /^CurrConns: (\d+)/m.exec(info);
    return match ? Number(match[1]) : undefined;
  }

  /**
   * Access records HAProxy dropped since the router started because the pipe to the daemon was
   * full (DroppedLogs), summed over the workers a reload replaced; undefined when not running.
   */
  async droppedAccessRecords(): Promise<number | undefined> {
    if (!this.supervisor || !this.logs) return undefined;
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
    if (!this.supervisor) return undefined;
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
    // A HAProxy started again from the files serves this very table.
    await this.persist();
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
    await this.reload();
    return true;
  }

  private deleteWhenIdle(slot: number, server: HaproxyServer): void {
    const name = `${slotBackend(slot)}/${server.name}`;
    const work = (async () => {
      const deadline = Date.now() + this.drainTimeoutSeconds * 1000;
      for (;;) {
        if (!this.supervisor) return;
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
    this.maps.set(path, entries);
    await writeFileAtomically(path, entries.map(([k, v]) => `${k} ${v}\n`).join(''));
  }

  private async applyCertificatesNow(certs: PreparedCertificate[], refusedBefore: readonly CertificateRefusal[] = []): Promise<void> {
    this.assertRunning('apply certificates');
    if (!this.o.httpsPort) throw new Error('The router has no HTTPS port (--https-port 0): certificates cannot be served.');
    const refused = [...refusedBefore];
    const wanted = new Map(certs.map((c) => [c.file, c]));
    for (const cert of wanted.values()) {
      const current = this.certificates.get(cert.file);
      if (current?.pem === cert.pem) continue;
      try {
        await this.loadCertificate(cert, current === undefined);
        this.certificates.set(cert.file, cert);
      } catch (error) {
        // A refusal by HAProxy itself: the others go on. Anything else (the socket gone) stops the change.
        if (!(error instanceof CertificateRefused)) throw error;
        refused.push({ file: cert.file, names: cert.names, reason: error.message });
      }
    }
    // A refused certificate's names keep what they had: its file is not removed.
    const kept = new Set(refused.map((r) => r.file).filter((file): file is string => file !== undefined));
    for (const file of [...this.certificates.keys()]) {
      if (wanted.has(file) || kept.has(file)) continue;
      await this.unloadCertificate(file);
      this.certificates.delete(file);
    }
    await this.writeCertList();
    await this.saveState();
    if (refused.length > 0) {
      throw new CertificatesPartlyApplied(
        `${refused.length} certificate(s) were not applied, the others were: ${refused.map((r) => r.reason).join(' ')}`,
        refused.flatMap((r) => r.names),
      );
    }
  }

  /** Loads a certificate into HAProxy (new, or renewed in place) and writes its file; `isNew`: add it to the crt-list too. */
  private async loadCertificate(cert: PreparedCertificate, isNew: boolean): Promise<void> {
    if (isNew) await expectAnswer(this.paths.adminSocket, `new ssl cert ${cert.file}`, /New empty certificate store|already exists/);
    const set = await runtimeCommand(this.paths.adminSocket, `set ssl cert ${cert.file}`, cert.pem);
    if (!/Transaction (created|updated)/.test(set)) {
      await runtimeCommand(this.paths.adminSocket, `abort ssl cert ${cert.file}`).catch(() => '');
      if (isNew) await runtimeCommand(this.paths.adminSocket, `del ssl cert ${cert.file}`).catch(() => '');
      throw new CertificateRefused(
        `HAProxy refused the certificate for ${cert.names.join(', ')}: ${set.split('\n')[0]}. The certificates served before stay in force.`,
      );
    }
    await expectAnswer(this.paths.adminSocket, `commit ssl cert ${cert.file}`, /Success/);
    await writeFileAtomically(cert.file, cert.pem);
    if (!isNew) return;
    const listed = await runtimeCommand(this.paths.adminSocket, `add ssl crt-list ${this.paths.certList}`, crtListLine(cert));
    if (!/Success/.test(listed)) {
      // Nothing half-done: a store no crt-list line uses would stay loaded and be written back.
      await runtimeCommand(this.paths.adminSocket, `del ssl cert ${cert.file}`).catch(() => '');
      await unlink(cert.file).catch(() => undefined);
      throw new CertificateRefused(`HAProxy did not list the certificate for ${cert.names.join(', ')}: ${listed.split('\n')[0]}.`);
    }
  }

  private async unloadCertificate(file: string): Promise<void> {
    await expectAnswer(this.paths.adminSocket, `del ssl crt-list ${this.paths.certList} ${file}`, /deleted|Success/i);
    await runtimeCommand(this.paths.adminSocket, `del ssl cert ${file}`);
    await unlink(file).catch(() => undefined);
  }

  private async writeCertList(): Promise<void> {
    const lines = [this.paths.defaultCert, ...[...this.certificates.values()].map(crtListLine)];
    await writeFileAtomically(this.paths.certList, lines.join('\n') + '\n');
  }

  private async writeConfig(): Promise<void> {
    const servers = new Map([...this.slotState].map(([slot, state]) => [slot, state.servers]));
    if (this.workerUser === null) this.workerUser = process.getuid?.() === 0 && (await systemUserExists('haproxy')) ? 'haproxy' : undefined;
    const text = renderHaproxyConfig({
      workDir: this.o.workDir,
      listenHost: this.o.listenHost,
      port: this.o.port,
      httpsPort: this.o.httpsPort,
      trustedProxies: this.o.trustedProxies,
      acmeChallenge: this.o.acmeChallenge,
      accessLog: this.o.onRequest !== undefined,
      slots: this.slots,
      servers,
      drainTimeoutSeconds: this.drainTimeoutSeconds,
      user: this.workerUser,
      threads: routerThreads(availableParallelism()),
    });
    await writeFileAtomically(this.paths.config, text);
  }

  /** What the next daemon needs and HAProxy's files do not hold, and the configuration with today's servers. */
  private async persist(): Promise<void> {
    await this.writeConfig();
    await this.saveState();
  }

  private async saveState(): Promise<void> {
    await saveRouterState(this.paths.state, {
      slots: this.slots,
      backends: [...this.slotState].map(([slot, state]) => ({ slot, appId: state.appId, servers: state.servers })),
      assigned: [...this.slotOf].map(([appId, slot]) => ({ appId, slot })),
      freeSlots: this.freeSlots,
      nextServer: this.nextServer,
      certificates: [...this.certificates.values()].map((c) => ({ file: c.file, names: c.names })),
      exitsReported: this.exitsReported,
    });
  }

  private loadState(state: RouterState): void {
    this.slots = state.slots;
    for (const backend of state.backends) this.slotState.set(backend.slot, { appId: backend.appId, servers: backend.servers });
    for (const { appId, slot } of state.assigned) this.slotOf.set(appId, slot);
    this.freeSlots = state.freeSlots;
    this.nextServer = state.nextServer;
    this.exitsReported = state.exitsReported;
    this.certificates = new Map();
    for (const { file, names } of state.certificates) {
      // Only files of its own certificate folder: the state is root's, but a path is never taken on trust.
      if (!file.startsWith(`${this.paths.certDir}/`) || file.slice(this.paths.certDir.length + 1).includes('/')) continue;
      let pem = '';
      try {
        pem = readFileSync(file, 'utf8');
      } catch {
        // Missing: reconcile() loads nothing for it, and the next applyCertificates() writes it again.
      }
      this.certificates.set(file, { file, names, pem });
    }
  }

  private mapPaths(): string[] {
    // Without an HTTPS listener the configuration has no force-https map.
    return [this.paths.hostsMap, this.paths.wildcardMap, ...(this.o.httpsPort ? [this.paths.forceHttpsMap] : [])];
  }

  /**
   * After an adoption: the configuration is written for this daemon's options; a change beyond
   * the servers and the ACME responder's port (another port, HTTPS, trusted proxies) reloads
   * HAProxy, which reads it.
   */
  private async matchConfiguration(): Promise<void> {
    const before = await readFile(this.paths.config, 'utf8').catch(() => '');
    await this.writeConfig();
    const after = await readFile(this.paths.config, 'utf8');
    const shape = (text: string) =>
      text
        .split('\n')
        .filter((line) => !line.startsWith('  server '))
        .join('\n');
    if (shape(before) === shape(after)) return;
    this.log("The router's configuration changed with this daemon's options: reloading HAProxy.");
    await this.check();
    await this.reload();
  }

  /**
   * Brings the running HAProxy in line with this object: after an adoption (the previous daemon
   * may have died between a change and its record) and after HAProxy was started again (it may
   * have died between a change and the files). Servers it runs that the state does not know are
   * put in maintenance and deleted once idle; missing ones are added; the maps are committed
   * again; certificates are loaded or removed; the ACME responder's server points at this daemon.
   */
  private async reconcile(): Promise<void> {
    this.assertRunning('reconcile the router');
    const socket = this.paths.adminSocket;
    const running = runningServers(await runtimeCommand(socket, 'show servers state'));
    for (const server of running) {
      const slot = /^app(\d+)$/.exec(server.backend)?.[1];
      const number = /^i(\d+)$/.exec(server.name)?.[1];
      if (slot === undefined || number === undefined) continue;
      this.nextServer = Math.max(this.nextServer, Number(number) + 1);
      const known = this.slotState
        .get(Number(slot))
        ?.servers.some((s) => s.name === server.name && s.address === server.address && s.port === server.port);
      if (!known) {
        await runtimeCommand(socket, `set server ${server.backend}/${server.name} state maint`);
        this.deleteWhenIdle(Number(slot), { name: server.name, address: server.address, port: server.port });
      } else if (server.adminState !== 0) {
        await runtimeCommand(socket, `enable server ${server.backend}/${server.name}`);
      }
    }
    for (const [slot, state] of this.slotState) {
      for (const server of state.servers) {
        if (running.some((r) => r.backend === slotBackend(slot) && r.name === server.name)) continue;
        await expectAnswer(
          socket,
          `add server ${slotBackend(slot)}/${server.name} ${server.address}:${server.port} ${SERVER_OPTIONS}`,
          /New server registered/,
        );
        await runtimeCommand(socket, `enable server ${slotBackend(slot)}/${server.name}`);
      }
    }
    for (const map of this.mapPaths()) await this.replaceMap(map, this.maps.get(map) ?? []);
    if (this.o.httpsPort) {
      const listed = new Set(crtListFiles(await runtimeCommand(socket, `show ssl crt-list ${this.paths.certList}`)));
      for (const cert of [...this.certificates.values()]) {
        if (listed.has(cert.file) || !cert.pem) continue;
        // One certificate HAProxy refuses now keeps neither the others nor the routes from coming back.
        await this.loadCertificate(cert, true).catch((error: Error) => {
          if (!(error instanceof CertificateRefused)) throw error;
          this.certificates.delete(cert.file);
          this.log(`${error.message} It is left out until the platform applies its certificates again.`);
        });
      }
      for (const file of listed) {
        if (file !== this.paths.defaultCert && !this.certificates.has(file)) await this.unloadCertificate(file);
      }
      await this.writeCertList();
    }
    const acme = this.o.acmeChallenge;
    if (acme) await runtimeCommand(socket, `set server acme/acme addr ${validateIPv4(acme.address)} port ${validatePort(acme.port)}`);
    await this.persist();
  }

  /** A reload through the supervisor (HAProxy re-reads its configuration; connections in flight finish). */
  private async reload(): Promise<void> {
    const oldPid = await this.workerPid();
    if (!signalSupervisor(this.supervisor!, 'SIGUSR2')) this.assertRunning('reload HAProxy');
    await this.waitForWorker(oldPid, undefined);
  }

  /** Looks for the supervisor's death and HAProxy's (every 250 ms: a read of /proc and a stat). */
  private watch(): void {
    let ticks = 0;
    this.watcher = setInterval(() => {
      if (!this.supervisor || this.recovering) return;
      if (++ticks % 240 === 0) void this.trimSupervisorLog();
      if (!isAlive(this.supervisor)) {
        this.recovering = true;
        void this.serialized(() => this.replaceSupervisor())
          .catch((error: Error) => this.log(`Could not start the router's supervisor again: ${error.message}`))
          .finally(() => (this.recovering = false));
        return;
      }
      if (fileSize(this.paths.exits) === this.exitsReported) return;
      if (this.reportExits() === 0) return;
      this.recovering = true;
      void this.serialized(async () => {
        await this.waitForWorker(undefined, undefined);
        await this.reconcile();
      })
        .catch((error: Error) => this.log(`After HAProxy started again, the router could not be brought up to date: ${error.message}`))
        .finally(() => (this.recovering = false));
    }, WATCH_INTERVAL_MS);
    this.watcher.unref();
  }

  /** The supervisor and HAProxy append to it (O_APPEND): emptied, it goes on from its start. */
  private async trimSupervisorLog(): Promise<void> {
    if (fileSize(this.paths.holderLog) > SUPERVISOR_LOG_LIMIT) await truncate(this.paths.holderLog, 0).catch(() => undefined);
  }

  private stopWatching(): void {
    clearInterval(this.watcher);
    this.watcher = undefined;
  }

  /** Tells the daemon of each death recorded since the last one told; returns how many. */
  private reportExits(): number {
    const { exits, offset } = readExits(this.paths.exits, this.exitsReported);
    this.exitsReported = offset;
    for (const exit of exits) {
      this.log(describeExit(exit));
      this.o.onEngineRestart?.(exit);
    }
    return exits.length;
  }

  /** The supervisor itself died (HAProxy went with it): a new one starts HAProxy from the files, which hold this object's state. */
  /** The supervisor of this work folder, started detached (a fresh start or a replacement). */
  private launchSupervisor(): ReturnType<typeof startSupervisor> {
    return startSupervisor({
      workDir: this.o.workDir,
      pidFile: this.paths.holderPid,
      logFile: this.paths.holderLog,
      drainSeconds: this.drainTimeoutSeconds,
      haproxyArgv: this.haproxyArgv(),
      env: engineEnv(),
    });
  }

  private async replaceSupervisor(): Promise<void> {
    const gone = this.supervisor;
    if (!gone || isAlive(gone)) return;
    this.log(`The router's supervisor (pid ${gone.pid}) is gone, and HAProxy with it: starting them again.`);
    this.logs?.stop();
    await this.persist();
    await this.writeCertList();
    const logStart = fileSize(this.paths.holderLog);
    this.supervisor = await this.launchSupervisor();
    await this.waitForWorker(undefined, logStart);
    this.openAccessLog();
    await this.reconcile();
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

  /**
   * A fresh start: everything HAProxy reads lives in the work folder, root's alone (it holds
   * private keys); nothing of an earlier run is kept but the default certificate.
   */
  private async prepareWorkDir(): Promise<void> {
    await unlink(this.paths.adminSocket).catch(() => undefined);
    for (const file of [this.paths.state, this.paths.exits, this.paths.holderPid, this.paths.haproxyPid]) await rm(file, { force: true });
    this.exitsReported = 0;
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

  /**
   * Waits until a worker (another one than `oldPid` after a reload) answers on the admin socket.
   * `startedAtLog`: HAProxy was just started from supervisor.log's offset; a death recorded
   * meanwhile fails at once, quoting what HAProxy said (a port taken, a bad certificate).
   */
  private async waitForWorker(oldPid: string | undefined, startedAtLog: number | undefined): Promise<void> {
    const deadline = Date.now() + 15_000;
    const said = () => outputSince(this.paths.holderLog, startedAtLog ?? fileSize(this.paths.holderLog) - 4000) || 'nothing';
    for (;;) {
      this.assertRunning('start HAProxy');
      const pid = await this.workerPid();
      if (pid && pid !== oldPid) return;
      if (startedAtLog !== undefined && fileSize(this.paths.exits) > this.exitsReported)
        throw new Error(
          `HAProxy exited as it started. It said: ${said()}. ` +
            `A common cause is another process listening on ${this.o.listenHost}:${this.o.port}${this.o.httpsPort ? ` or :${this.o.httpsPort}` : ''}.`,
        );
      if (Date.now() > deadline) throw new Error(`HAProxy did not start serving within 15 s. It said: ${said()}`);
      await sleep(20);
    }
  }

  private assertRunning(action: string): void {
    const supervisor = this.supervisor;
    if (!supervisor) throw new Error(`Cannot ${action}: the HAProxy router is not started. Call start() first.`);
    if (!isAlive(supervisor)) {
      throw new Error(
        `Cannot ${action}: the router's supervisor (pid ${supervisor.pid}) exited. It said: ${outputSince(this.paths.holderLog, fileSize(this.paths.holderLog) - 2000) || 'nothing'}`,
      );
    }
  }
}

/** An error of reaching HAProxy (not of what it answered): no socket, nobody listening, the connection cut. */
function isConnectionError(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  if (code && ['ENOENT', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE'].includes(code)) return true;
  return error instanceof RuntimeApiError && /did not answer|: no answer$/.test(error.message);
}

/** A map file's entries (`key value` lines), as replaceMap wrote them. */
async function readMapFile(path: string): Promise<Array<[string, string]>> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line.includes(' '))
    .map((line) => [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)]);
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
