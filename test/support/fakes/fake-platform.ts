/**
 * The deploy logic (Deployer and AppRuntime) on a real store and real logs, with the fake
 * instance backend and the fake router: no root, no sandbox, no build. Releases are made by
 * `release()` as if a build had produced them, and deployed the way restarts and rollbacks are
 * (`reuse-release`), so everything after the build runs as in the daemon.
 */
import { DeployLayout } from '../../../src/storage/deploy-layout.js';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../../src/store/store.js';
import type { AppRow } from '../../../src/store/apps.js';
import type { Deployment } from '../../../src/store/deployments.js';
import { LogHub } from '../../../src/logs/log-hub.js';
import { AppRuntime } from '../../../src/serving/app-runtime.js';
import { Deployer } from '../../../src/pipeline/deployer.js';
import type { ReleaseSpec } from '../../../src/serving/release-spec.js';
import type { InstanceSpec } from '../../../src/instances/backend.js';
import type { SandboxIdentity, SandboxPolicy } from '../../../src/sandbox/sandbox-identity.js';
import { type EventLog, type FakeApp, FakeInstanceBackend } from './fake-instance-backend.js';
import { FakeRouter } from './fake-router.js';

export const FAKE_DOMAIN = 'apps.test';

/** The real log hub, keeping every line in memory too so tests read a log without its files. */
class RecordingLogHub extends LogHub {
  readonly lines = new Map<string, string[]>();

  override append(key: string, stream: string, line: string): void {
    const lines = this.lines.get(key) ?? [];
    lines.push(line);
    this.lines.set(key, lines);
    super.append(key, stream, line);
  }
}

const SANDBOX: SandboxIdentity = {
  user: { uid: 60_000, gid: 60_000 },
  limits: { memoryBytes: 256 * 1024 * 1024, pids: 256, cpuShares: 512 },
  flavor: 'pico',
  readOnlyPaths: [],
};

const sandboxes: SandboxPolicy = { instance: async () => SANDBOX, build: async () => SANDBOX };

/** Parts a Deployer needs only to build, which these tests never do: using one is a test bug. */
function unused(what: string): never {
  throw new Error(`The fake platform does not build: ${what} was used.`);
}

export interface FakePlatform {
  dir: string;
  store: Store;
  logs: RecordingLogHub;
  events: EventLog;
  backend: FakeInstanceBackend;
  router: FakeRouter;
  runtime: AppRuntime;
  deployer: Deployer;
  /** Variables of each app, as the daemon would compose them. */
  vars: Map<string, Record<string, string>>;
  /** How the instances of each release folder behave (default: healthy). */
  apps: Map<string, FakeApp>;
  app(name: string): AppRow;
  /** A release on disk, recorded as built by an OK deployment of `commit`. */
  release(app: AppRow, commit: string, behaviour?: FakeApp): Deployment;
  /** Queues a deployment that starts a built release (restart, rollback). */
  deploy(app: AppRow, built: Deployment): Deployment;
  /** Waits for the queue and the drains. */
  settle(): Promise<void>;
  /** A runtime restarted on the same store, as after a daemon restart. */
  restartRuntime(): AppRuntime;
  close(): Promise<void>;
}

export async function fakePlatform(options: { drainDelayMs?: number; exclusiveApps?: ReadonlySet<string> } = {}): Promise<FakePlatform> {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-fake-platform-'));
  const store = Store.open(join(dir, 'store.db'));
  const logs = new RecordingLogHub(join(dir, 'logs'));
  const events: EventLog = [];
  const apps = new Map<string, FakeApp>();
  const vars = new Map<string, Record<string, string>>();
  const appFor = (spec: InstanceSpec) => apps.get(spec.releaseDir) ?? {};
  const backend = new FakeInstanceBackend(appFor, events);
  const router = new FakeRouter(events);
  await router.start();
  const org = store.orgs.create('fake-org');
  const makeRuntime = (instanceBackend: FakeInstanceBackend) =>
    new AppRuntime({
      store,
      backend: instanceBackend,
      sandboxes,
      router,
      logs,
      domain: FAKE_DOMAIN,
      gatewayAddress: '127.0.0.1',
      appEnv: (id) => vars.get(id) ?? {},
      log: () => undefined,
      bootDeadlineMs: 3000,
      drainDelayMs: options.drainDelayMs ?? 20,
      healthCheckSettleMs: 100,
      hasExclusiveVolume: (appId) => options.exclusiveApps?.has(appId) ?? false,
      holds: router,
      sleepHolds: router,
    });
  const runtime = makeRuntime(backend);
  // As the daemon does at start: nothing to adopt in a new store; routing changes apply from now on.
  await runtime.restoreAll();
  const deployer = new Deployer({
    store,
    runtime,
    logs,
    providers: new Map(),
    catalog: { versions: async () => unused('the version catalog') },
    dataDir: dir,
    toolchainCacheDir: join(dir, 'toolchains'),
    sandboxes,
    get repos(): never {
      return unused('the git repositories');
    },
    get sandboxHost(): never {
      return unused('the sandbox host');
    },
    buildNetworks: { acquireBuildNetwork: async () => unused('a build network') },
    gatewayAddress: '127.0.0.1',
    appEnv: (id) => vars.get(id) ?? {},
    machineEnv: {},
    log: () => undefined,
  });
  const runtimes = [runtime];
  const backends = [backend];
  return {
    dir,
    store,
    logs,
    events,
    backend,
    router,
    runtime,
    deployer,
    vars,
    apps,
    app: (name) => store.apps.create({ orgId: org.id, name, type: 'node', region: 'par' }),
    release(app, commit, behaviour = {}) {
      const built = store.deployments.create({ appId: app.id, commit, cause: 'test build', userId: null });
      const releaseDir = new DeployLayout(dir).releaseFolder(app.id, built.id);
      mkdirSync(releaseDir, { recursive: true });
      const spec: ReleaseSpec = {
        deploymentId: built.id,
        commit,
        provider: 'node',
        releaseDir,
        start: ['node', 'server.js'],
        beforeStart: [],
        planEnv: {},
        toolPath: [],
      };
      store.deployments.setReleaseJson(built.id, JSON.stringify(spec));
      store.deployments.finish(built.id, 'OK', null);
      apps.set(releaseDir, behaviour);
      return store.deployments.byId(built.id)!;
    },
    deploy: (app, built) =>
      deployer.enqueue(app, { commit: built.commit_sha, cause: 'test', userId: null, mode: 'reuse-release', releaseOf: built.id }),
    async settle() {
      await deployer.idle();
      await Promise.all(runtimes.map((r) => r.drained()));
    },
    restartRuntime() {
      const next = new FakeInstanceBackend(appFor, events);
      backends.push(next);
      const restarted = makeRuntime(next);
      runtimes.push(restarted);
      return restarted;
    },
    async close() {
      await deployer.idle();
      for (const r of runtimes) await r.drained();
      for (const b of backends) await b.stopAll(0);
      await router.stop();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
