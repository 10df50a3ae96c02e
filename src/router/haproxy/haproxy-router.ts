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
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { systemUserExists } from '../engine-process.js';
import type { AccessRecord, Router, RouterOptions, RoutingTable, TlsCertificate } from '../router.js';
import { validateCidr, validateIPv4, validatePort, validateTable, type ValidatedRoute } from '../validate.js';
import { AccessLogReceiver, makeAccessPipe } from './access-log.js';
import { BackendTable, routesByApp, type RetiredServer } from './backend-table.js';
import { CertificateStore } from './certificate-store.js';
import {
  CertificatesPartlyApplied,
  certificateFileOf,
  prepareCertificate,
  type CertificateRefusal,
  type PreparedCertificate,
} from './certificates.js';
import { haproxyPaths, renderHaproxyConfig, routerThreads, type HaproxyPaths, WAKE_VALUE } from './config.js';
import { checkConfiguration, isConnectionError } from './haproxy-process.js';
import { HostMaps } from './host-maps.js';
import { runtimeCommand } from './runtime-api.js';
import { RuntimeFigures } from './runtime-figures.js';
import type { BackendLoad } from './stats.js';
import { loadRouterState, saveRouterState, writeFileAtomically, type RouterState } from './router-state.js';
import { isAlive, liveSupervisor, type EngineExit, type SupervisorRecord } from './supervisor-files.js';
import { stopSupervisor } from './supervisor-control.js';
import { SupervisorLink } from './supervisor-link.js';
import { clearEarlierRun, removeTemporaryFiles, writeHoldFiles } from './work-folder.js';

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

/**
 * The coordinator: each change runs alone (`serialized`) and survives HAProxy being started
 * again (`acrossRestarts`); the backends and their servers (backend-table.ts), the host maps
 * (host-maps.ts) and the certificates (certificate-store.ts) each keep their part of HAProxy in
 * step, and this class keeps the supervisor, the configuration and the state for the next daemon.
 */
export class HaproxyRouter implements Router {
  private readonly o: HaproxyRouterOptions & { httpsPort: number; trustedProxies: string[] };
  private readonly paths: HaproxyPaths;
  private readonly binary: string;
  private readonly drainTimeoutSeconds: number;
  private readonly log: (line: string) => void;
  private readonly supervisor: SupervisorLink;
  private workerUser: string | undefined | null = null;
  private logs: AccessLogReceiver | undefined;
  private readonly backends: BackendTable;
  private readonly certificates: CertificateStore;
  private readonly maps: HostMaps;
  private readonly figures: RuntimeFigures;
  private queue: Promise<unknown> = Promise.resolve();
  /** Apps whose requests the router holds now. */
  private readonly held = new Set<string>();
  /** Apps asleep (scale to zero): held until they wake, their first request marking them. */
  private readonly asleep = new Set<string>();
  /** Whether the running HAProxy loaded a hold action that marks sleeping apps (an older one only holds). */
  private wakingScript = true;

  constructor(options: HaproxyRouterOptions) {
    validateIPv4(options.listenHost, 'Router listen address');
    validatePort(options.port, 'Router port');
    const httpsPort = options.httpsPort ? validatePort(options.httpsPort, 'Router HTTPS port') : 0;
    const trustedProxies = (options.trustedProxies ?? []).map((cidr) => validateCidr(cidr));
    this.o = { ...options, workDir: resolve(options.workDir), httpsPort, trustedProxies };
    this.paths = haproxyPaths(this.o.workDir);
    this.binary = options.haproxyBinary ?? (existsSync('/usr/sbin/haproxy') ? '/usr/sbin/haproxy' : 'haproxy');
    this.drainTimeoutSeconds = options.drainTimeoutSeconds ?? 60;
    this.log = options.log ?? (() => undefined);
    this.supervisor = new SupervisorLink({
      workDir: this.o.workDir,
      paths: this.paths,
      binary: this.binary,
      drainTimeoutSeconds: this.drainTimeoutSeconds,
      listening: `${this.o.listenHost}:${this.o.port}${httpsPort ? ` or :${httpsPort}` : ''}`,
      log: this.log,
      onEngineRestart: options.onEngineRestart,
    });
    this.backends = new BackendTable(
      this.paths.adminSocket,
      options.initialSlots ?? 128,
      this.drainTimeoutSeconds,
      () => this.supervisor.record !== undefined,
    );
    this.certificates = new CertificateStore(this.paths, this.log);
    this.maps = new HostMaps(this.paths, httpsPort !== 0);
    this.figures = new RuntimeFigures(this.paths.adminSocket, (backend) => this.backends.appOfBackend(backend));
  }

  /** Adopts the router a previous daemon left running on this work folder, or starts one afresh. */
  async start(): Promise<void> {
    if (this.supervisor.record) throw new Error('The HAProxy router is already started; call stop() before starting it again.');
    await mkdir(this.o.workDir, { recursive: true, mode: 0o700 });
    await chmod(this.o.workDir, 0o700);
    await this.supervisor.trimLog();
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
    this.supervisor.watch(
      () => this.serialized(() => this.replaceSupervisor()),
      () =>
        this.serialized(async () => {
          await this.supervisor.waitForWorker(undefined, undefined);
          await this.reconcile();
        }),
    );
  }

  /** Back to what the constructor made, after an adoption that failed half-way. */
  private forgetState(): void {
    this.supervisor.record = undefined;
    this.logs?.stop();
    this.logs = undefined;
    this.backends.reset();
    this.certificates.reset();
    this.maps.clear();
    this.figures.reset();
  }

  private async startFresh(previous: RouterState | undefined): Promise<void> {
    // Deaths a supervisor recorded that no daemon reported yet: told before the record is wiped.
    this.supervisor.exitsReported = Math.max(this.supervisor.exitsReported, previous?.exitsReported ?? 0);
    this.supervisor.reportExits();
    await this.prepareWorkDir();
    this.maps.withHolds = true;
    await makeAccessPipe(this.paths.accessPipe);
    await this.writeConfig();
    await this.check();
    try {
      await this.supervisor.launch();
    } catch (error) {
      await this.stop().catch(() => undefined);
      throw error;
    }
    this.openAccessLog();
    await this.saveState();
  }

  /** Takes over a running router: its state loaded, nothing wiped, HAProxy brought in line with the state. */
  private async adopt(live: SupervisorRecord, state: RouterState): Promise<void> {
    this.supervisor.record = live;
    this.loadState(state);
    // A router started by a version without holds keeps running without them until one is asked
    // for: adding them now would reload it at every upgrade from such a version.
    this.maps.withHolds = (await readFile(this.paths.config, 'utf8').catch(() => '')).includes('lua.slipway_hold');
    // The script on disk is the one HAProxy loaded (it is rewritten only before a reload).
    this.wakingScript = (await readFile(this.paths.holdScript, 'utf8').catch(() => '')).includes(WAKE_VALUE);
    await this.maps.readFiles();
    for (const backend of this.maps.asleepBackends()) {
      const appId = this.backends.appOfBackend(backend);
      if (appId !== undefined) this.asleep.add(appId);
    }
    await this.supervisor.waitForWorker(undefined, undefined);
    this.supervisor.reportExits();
    this.openAccessLog();
    await this.matchConfiguration();
    await this.reconcile();
    this.log(
      `Adopted the router left running (supervisor pid ${live.pid}): ${this.backends.appCount()} app(s), ${this.backends.serverCount()} server(s), ${this.certificates.size} certificate(s).`,
    );
  }

  private openAccessLog(): void {
    const onRequest = this.o.onRequest;
    if (!onRequest) return;
    this.logs = new AccessLogReceiver(
      (backend) => this.backends.appOfBackend(backend),
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
      await this.supervisor.waitForWorker(undefined, undefined);
      await this.reconcile();
      await work();
    }
  }

  /** Drains and stops HAProxy and its supervisor (`slipway system stop`). */
  async stop(): Promise<void> {
    if (!this.supervisor.record) return;
    this.supervisor.stopWatching();
    await this.queue.catch(() => undefined);
    // Read after the queue: a supervisor started again meanwhile is the one to stop.
    const supervisor = this.supervisor.record;
    // SIGUSR1: the supervisor soft-stops HAProxy (requests in flight finish, bounded by hard-stop-after), then exits.
    if (supervisor) await stopSupervisor(supervisor, (this.drainTimeoutSeconds + 15) * 1000);
    this.supervisor.record = undefined;
    // The last requests' lines may still wait in the pipe (the receiver rests between reads).
    await this.logs?.drain(1000);
    this.logs = undefined;
  }

  /** The daemon lets go: HAProxy and its supervisor go on serving, and the next daemon's start() adopts them. */
  async detach(): Promise<void> {
    if (!this.supervisor.record) return;
    this.supervisor.stopWatching();
    await this.queue.catch(() => undefined);
    await this.saveState().catch((error: Error) => this.log(`Could not save the router's state: ${error.message}`));
    this.logs?.stop();
    this.logs = undefined;
    // Servers being drained stay in maintenance; the next daemon deletes them (reconcile).
    this.supervisor.record = undefined;
  }

  /** Client connections open now, as HAProxy counts them. */
  async activeConnections(): Promise<number | undefined> {
    return this.supervisor.record ? this.figures.activeConnections() : undefined;
  }

  /**
   * Access records HAProxy dropped since the router started because the pipe to the daemon was
   * full (DroppedLogs), summed over the workers a reload replaced; undefined when not running.
   */
  async droppedAccessRecords(): Promise<number | undefined> {
    return this.supervisor.record && this.logs ? this.figures.droppedAccessRecords() : undefined;
  }

  /** Sessions each app's backend serves now (`show stat` scur), by app id: every routed app, 0 when idle. */
  async appConnections(): Promise<Map<string, number> | undefined> {
    return this.supervisor.record ? this.figures.appConnections() : undefined;
  }

  /** Each app's sessions and requests queued now (`show stat` scur and qcur), by app id, for the autoscaler. */
  async appLoad(): Promise<Map<string, BackendLoad> | undefined> {
    return this.supervisor.record ? this.figures.appLoad() : undefined;
  }

  /**
   * Holds the app's new requests at the router (they wait, they are not refused) until
   * `release`, for at most HOLD_MAX_SECONDS; requests already with an instance go on. Used while
   * the app's data moves under it: no instance receives a request meanwhile.
   */
  hold(appId: string): Promise<void> {
    return this.serialized(async () => {
      await this.enableHolds();
      this.held.add(appId);
      await this.maps.hold(this.heldBackends(), this.asleepBackends());
    });
  }

  /**
   * Adopted from a version without holds, or whose hold action cannot wake a sleeping app: the
   * one reload that brings them, now.
   */
  private async enableHolds(): Promise<void> {
    if (this.maps.withHolds && this.wakingScript) return;
    this.maps.withHolds = true;
    this.wakingScript = true;
    await this.settled();
    await this.writeConfig();
    await this.check();
    await this.supervisor.reload();
    await this.maps.hold([], this.asleepBackends());
    this.log('The router can now hold requests: reloaded HAProxy once.');
  }

  /** Lets the held requests of the app go on, to the instances routed now. */
  release(appId: string): Promise<void> {
    return this.serialized(async () => {
      if (!this.held.delete(appId)) return;
      await this.maps.hold(this.heldBackends(), this.asleepBackends());
    });
  }

  /**
   * The app sleeps (scale to zero): its requests are held as by `hold`, and the first one marks
   * it in the hold map, which `wakeRequests` reads. It stays so across daemons (an adopted router
   * keeps it) until `wake`.
   */
  sleep(appId: string): Promise<void> {
    return this.serialized(async () => {
      await this.enableHolds();
      this.asleep.add(appId);
      await this.maps.hold(this.heldBackends(), this.asleepBackends());
    });
  }

  /** The app serves again: its held requests go on, to the instances routed now. */
  wake(appId: string): Promise<void> {
    return this.serialized(async () => {
      if (!this.asleep.delete(appId)) return;
      await this.maps.hold(this.heldBackends(), this.asleepBackends());
    });
  }

  /** The apps asleep that a request waits for now; undefined when the router cannot tell. */
  async wakeRequests(): Promise<Set<string> | undefined> {
    if (!this.supervisor.record || this.asleep.size === 0) return this.asleep.size === 0 ? new Set() : undefined;
    const backends = await this.maps.wakeRequests().catch(() => undefined);
    if (backends === undefined) return undefined;
    return new Set(backends.flatMap((backend) => this.backends.appOfBackend(backend) ?? []).filter((id) => this.asleep.has(id)));
  }

  /** The backends of the held apps that have one (an app never routed has nothing to hold). */
  private heldBackends(): string[] {
    return [...this.held].map((id) => this.backends.backendOf(id)).filter((backend) => /^app\d+$/.test(backend));
  }

  private asleepBackends(): string[] {
    return [...this.asleep].map((id) => this.backends.backendOf(id)).filter((backend) => /^app\d+$/.test(backend));
  }

  /** Resolves once every removed server has been deleted from HAProxy (tests). */
  async settled(): Promise<void> {
    await this.backends.settled();
  }

  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async applyNow(routes: ValidatedRoute[]): Promise<void> {
    this.supervisor.assertRunning('apply a routing table');
    const byApp = routesByApp(routes);
    // A deleted app no longer sleeps: its backend's slot may serve another app later.
    for (const appId of this.asleep) if (!byApp.has(appId)) this.asleep.delete(appId);
    await this.backends.releaseGoneApps(new Set(byApp.keys()));
    if (await this.growSlotsFor([...byApp.keys()])) return this.applyNow(routes);

    const retired: RetiredServer[] = [];
    for (const [appId, entry] of byApp) retired.push(...(await this.backends.updateServers(appId, entry.upstreams)));
    // The hosts point at backends whose new servers are up before any old one stops taking requests.
    const backendOf = (appId: string) => this.backends.backendOf(appId);
    await this.maps.route(
      routes,
      backendOf,
      [...byApp].filter(([, e]) => e.forceHttps).map(([appId]) => backendOf(appId)),
    );
    await this.backends.retire(retired);
    // A HAProxy started again from the files serves this very table.
    await this.persist();
  }

  /**
   * More apps than backends: the only change that needs a reload. The new configuration holds
   * twice the backends and today's servers; the old process closes idle keep-alive connections
   * after their next response (idle-close-on-response) and finishes what it serves.
   */
  private async growSlotsFor(appIds: string[]): Promise<boolean> {
    if (!this.backends.grownFor(appIds)) return false;
    await this.settled();
    await this.writeConfig();
    await this.check();
    await this.supervisor.reload();
    return true;
  }

  private async applyCertificatesNow(certs: PreparedCertificate[], refusedBefore: readonly CertificateRefusal[] = []): Promise<void> {
    this.supervisor.assertRunning('apply certificates');
    if (!this.o.httpsPort) throw new Error('The router has no HTTPS port (--https-port 0): certificates cannot be served.');
    const refused = await this.certificates.apply(certs, refusedBefore);
    await this.saveState();
    if (refused.length > 0) {
      throw new CertificatesPartlyApplied(
        `${refused.length} certificate(s) were not applied, the others were: ${refused.map((r) => r.reason).join(' ')}`,
        refused.flatMap((r) => r.names),
      );
    }
  }

  private async writeConfig(): Promise<void> {
    if (this.workerUser === null) this.workerUser = process.getuid?.() === 0 && (await systemUserExists('haproxy')) ? 'haproxy' : undefined;
    const text = renderHaproxyConfig({
      workDir: this.o.workDir,
      listenHost: this.o.listenHost,
      port: this.o.port,
      httpsPort: this.o.httpsPort,
      trustedProxies: this.o.trustedProxies,
      acmeChallenge: this.o.acmeChallenge,
      accessLog: this.o.onRequest !== undefined,
      slots: this.backends.slots,
      servers: this.backends.serversBySlot(),
      drainTimeoutSeconds: this.drainTimeoutSeconds,
      user: this.workerUser,
      threads: routerThreads(availableParallelism()),
      holds: this.maps.withHolds,
    });
    await writeHoldFiles(this.paths);
    await writeFileAtomically(this.paths.config, text);
  }

  /** What the next daemon needs and HAProxy's files do not hold, and the configuration with today's servers. */
  private async persist(): Promise<void> {
    await this.writeConfig();
    await this.saveState();
  }

  private async saveState(): Promise<void> {
    await saveRouterState(this.paths.state, {
      ...this.backends.toState(),
      certificates: this.certificates.toState(),
      exitsReported: this.supervisor.exitsReported,
    });
  }

  private loadState(state: RouterState): void {
    this.backends.load(state);
    this.supervisor.exitsReported = state.exitsReported;
    this.certificates.load(state.certificates);
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
    await this.supervisor.reload();
  }

  /**
   * Brings the running HAProxy in line with this object: after an adoption (the previous daemon
   * may have died between a change and its record) and after HAProxy was started again (it may
   * have died between a change and the files). Servers it runs that the state does not know are
   * put in maintenance and deleted once idle; missing ones are added; the maps are committed
   * again; certificates are loaded or removed; the ACME responder's server points at this daemon.
   */
  private async reconcile(): Promise<void> {
    this.supervisor.assertRunning('reconcile the router');
    await this.backends.reconcile();
    await this.maps.commitAgain();
    if (this.o.httpsPort) await this.certificates.reconcile();
    const acme = this.o.acmeChallenge;
    if (acme)
      await runtimeCommand(
        this.paths.adminSocket,
        `set server acme/acme addr ${validateIPv4(acme.address)} port ${validatePort(acme.port)}`,
      );
    await this.persist();
  }

  /** The supervisor itself died (HAProxy went with it): a new one starts HAProxy from the files, which hold this object's state. */
  private async replaceSupervisor(): Promise<void> {
    const gone = this.supervisor.record;
    if (!gone || isAlive(gone)) return;
    this.log(`The router's supervisor (pid ${gone.pid}) is gone, and HAProxy with it: starting them again.`);
    this.logs?.stop();
    await this.persist();
    await this.certificates.writeList();
    await this.supervisor.launch();
    this.openAccessLog();
    await this.reconcile();
  }

  private check(): Promise<void> {
    return checkConfiguration(this.binary, this.paths.config);
  }

  /** A fresh start: nothing of an earlier run is kept but the default certificate (work-folder.ts). */
  private async prepareWorkDir(): Promise<void> {
    this.supervisor.exitsReported = 0;
    await clearEarlierRun(this.paths);
    this.certificates.reset();
    await this.certificates.writeList();
    await removeTemporaryFiles(this.o.workDir);
  }
}
