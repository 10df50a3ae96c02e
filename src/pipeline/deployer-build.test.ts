/**
 * A deployment that builds, on fakes (no root): the fake runner stands in for the sandboxes
 * (the export writes the commit's files, the build steps answer as scripted), the fake instance
 * backend and router for what runs and serves. What is checked is the orchestration: the phases
 * in order in the log and the record, the release folder, what a failure and a cancellation
 * leave behind. test/integration/ deploys real apps the same way.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RepoStore } from '../receiver/repo-store.js';
import type { AppRow } from '../store/apps.js';
import type { BuildPlan, Provider } from '../providers/plan.js';
import type { SandboxIdentity } from '../sandbox/sandbox-identity.js';
import { type FakePlatform, fakePlatform } from '../../test/support/fakes/fake-platform.js';
import { FakeDeployRunner } from '../../test/support/fakes/fake-deploy-runner.js';
import { DeployLayout } from '../storage/deploy-layout.js';
import { Deployer } from './deployer.js';
import { DiskReserve } from '../storage/disk-reserve.js';

let p: FakePlatform;
let runner: FakeDeployRunner;
let deployer: Deployer;
let layout: DeployLayout;
const builds: string[] = [];
const MiB = 1024 * 1024;
/** Free bytes the data folder's disk reports to the reserve check. */
let diskFree = 100_000 * MiB;

const SANDBOX: SandboxIdentity = {
  user: { uid: process.getuid!(), gid: process.getgid!() },
  limits: { memoryBytes: 256 * 1024 * 1024, pids: 256, cpuShares: 512 },
  flavor: 'pico',
  readOnlyPaths: [],
};

const PLAN: BuildPlan = {
  provider: 'fake',
  toolchain: [],
  env: {},
  files: [],
  build: [{ label: 'install', argv: ['npm', 'ci'] }],
  beforeStart: [],
  start: { label: 'start', argv: ['node', 'server.js'] },
  cacheDirs: [],
  warnings: [],
  notes: [],
};

// The fake platform's apps are of type node.
const provider: Provider = {
  name: 'node',
  label: 'Fake apps',
  detect: async () => true,
  notDetected: () => ({ message: 'No package.json.', hint: 'Commit one.' }),
  plan: async () => PLAN,
};

before(async () => {
  p = await fakePlatform();
  layout = new DeployLayout(p.dir);
  runner = new FakeDeployRunner();
  // The export writes the commit's files where the receive phase asked for them.
  runner.script((argv) => argv[0] === 'git', { during: (step) => writeFile(join(step.spec.cwd, 'package.json'), '{}') });
  deployer = new Deployer({
    store: p.store,
    runtime: p.runtime,
    logs: p.logs,
    providers: new Map([['node', provider]]),
    catalog: { versions: async () => [] },
    dataDir: p.dir,
    toolchainCacheDir: join(p.dir, 'toolchains'),
    sandboxes: { instance: async () => SANDBOX, build: async () => SANDBOX },
    repos: { pathFor: (appId: string) => join(p.dir, 'repos', `${appId}.git`) } as RepoStore,
    get sandboxHost(): never {
      throw new Error('the fake runner runs every step');
    },
    runner,
    buildNetworks: {
      acquireBuildNetwork: async () => ({ namespacePath: '/run/netns/b', address: '10.0.0.9', release: async () => undefined }),
    },
    gatewayAddress: '127.0.0.1',
    appEnv: (id) => p.vars.get(id) ?? {},
    machineEnv: {},
    log: () => undefined,
    onBuildFinished: (outcome) => builds.push(outcome),
    reserve: new DiskReserve(1024 * MiB, [{ label: "data folder's disk", path: '/srv/slipway' }], async () => diskFree),
  });
  await mkdir(join(p.dir, 'repos'), { recursive: true });
});
after(async () => {
  await deployer.idle();
  await p.close();
});

const push = (app: AppRow, commit: string) => deployer.enqueue(app, { commit, cause: 'git push', userId: null, mode: 'build' });
const logOf = (id: string) => p.logs.lines.get(id) ?? [];
const record = (id: string) => p.store.deployments.byId(id)!;

test('a push is received, built, released, started and switched to, in that order', async () => {
  const app = p.app('story');
  builds.length = 0;
  const d = push(app, 'a'.repeat(40));
  await deployer.idle();
  await p.settle();
  assert.equal(record(d.id).state, 'OK', logOf(d.id).join('\n'));
  assert.equal(record(d.id).phase, 'done');
  const markers = [
    `==> [receive] Commit ${'a'.repeat(40)} exported without .git`,
    '==> [build] Build plan',
    '==> [build] install: npm ci',
    'Build succeeded in',
    `==> [release] Release ready in ${layout.releaseFolder(app.id, d.id)}`,
    '==> [run] Starting: node server.js',
    'Successfully deployed in',
  ];
  const at = markers.map((m) => logOf(d.id).findIndex((line) => line.startsWith(m)));
  assert.ok(
    at.every((i, n) => i >= 0 && (n === 0 || i > at[n - 1]!)),
    logOf(d.id).join('\n'),
  );
  const [serving] = p.runtime.instancesOf(app.id);
  assert.equal(serving!.spec.releaseDir, layout.releaseFolder(app.id, d.id));
  assert.equal(existsSync(layout.buildFolder(app.id)), false, 'the build folder became the release');
  assert.deepEqual(builds, ['success']);
});

test('a failed build names its phase, runs no instance, and leaves the serving release alone', async () => {
  const app = p.app('broken');
  const good = push(app, 'b'.repeat(40));
  await deployer.idle();
  await p.settle();
  const before = p.runtime.instancesOf(app.id).map((i) => i.id);
  p.vars.set(app.id, { CC_RUN_FAILED_HOOK: 'echo failed' });
  runner.script((argv) => argv[1] === 'ci', { err: ['npm ERR! missing script'], exitCode: 1 });
  builds.length = 0;
  const bad = push(app, 'c'.repeat(40));
  await deployer.idle();
  assert.equal(record(good.id).state, 'OK');
  assert.equal(record(bad.id).state, 'FAIL');
  assert.equal(record(bad.id).phase, 'build');
  assert.equal(record(bad.id).message, 'build: install exited with code 1.');
  const log = logOf(bad.id).join('\n');
  assert.match(log, /==> \[build\] Build failed: install exited with code 1\.\nHint: The output above shows the cause\./);
  assert.match(log, /The previous release keeps serving\./);
  assert.match(log, /CC_RUN_FAILED_HOOK was not run: the deployment failed before a release existed\./);
  assert.deepEqual(
    p.runtime.instancesOf(app.id).map((i) => i.id),
    before,
  );
  assert.equal(existsSync(layout.buildFolder(app.id)), false, 'the failed build folder is removed');
  assert.deepEqual(builds, ['failure']);
});

test('a deployment cancelled in mid-build ends CANCELLED, its build folder removed, no build time counted', async () => {
  const app = p.app('cancelled');
  runner.script((argv) => argv[1] === 'ci', { during: () => void deployer.cancel(app.id, 'the user cancelled it') });
  builds.length = 0;
  const d = push(app, 'd'.repeat(40));
  await deployer.idle();
  assert.equal(record(d.id).state, 'CANCELLED');
  assert.equal(record(d.id).message, 'the user cancelled it');
  assert.ok(logOf(d.id).includes('==> Deployment cancelled during the build phase: the user cancelled it'), logOf(d.id).join('\n'));
  assert.deepEqual(p.runtime.instancesOf(app.id), []);
  assert.equal(existsSync(layout.buildFolder(app.id)), false);
  assert.deepEqual(builds, []);
});

test('below the disk reserve a build is refused before its commit is exported; the serving release stays', async () => {
  const app = p.app('crowded');
  const good = push(app, 'd'.repeat(40));
  await deployer.idle();
  await p.settle();
  assert.equal(record(good.id).state, 'OK');
  const serving = p.runtime.instancesOf(app.id).map((i) => i.id);
  const exportsBefore = runner.steps.filter((step) => step.argv[0] === 'git').length;
  diskFree = 300 * MiB;
  try {
    const refused = push(app, 'e'.repeat(40));
    await deployer.idle();
    assert.equal(record(refused.id).state, 'FAIL');
    assert.equal(record(refused.id).phase, 'receive');
    const log = logOf(refused.id).join('\n');
    assert.match(log, /The build was refused: the data folder's disk \(\/srv\/slipway\) has 300 MiB free, below the reserve of 1 GiB\./);
    assert.match(log, /Running apps keep serving\. Free space on that disk/);
    assert.equal(runner.steps.filter((step) => step.argv[0] === 'git').length, exportsBefore, 'nothing exported');
    assert.deepEqual(
      p.runtime.instancesOf(app.id).map((i) => i.id),
      serving,
    );
  } finally {
    diskFree = 100_000 * MiB;
  }
});
