/**
 * The build phase on a fake runner (no root, no sandbox, no package manager): which commands
 * run, as argv arrays and in which folder, what is skipped, and what a failure or a
 * cancellation says. The caches, the untrusted tree and the plan's files are the real ones, in a
 * temporary data folder owned by whoever runs the test. test/integration/ builds real apps.
 */
import { after, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { AppRow } from '../store/apps.js';
import type { Deployment } from '../store/deployments.js';
import type { BuildPlan, Provider } from '../providers/plan.js';
import { PlanError } from '../core/errors.js';
import type { SandboxIdentity } from '../sandbox/sandbox-identity.js';
import { FakeDeployRunner } from '../../test/support/fakes/fake-deploy-runner.js';
import { type BuildPhaseDeps, buildRelease, type BuiltRelease } from './build-phase.js';
import { DeployLayout } from '../storage/deploy-layout.js';
import { DeploymentCancelled, PhaseError } from '../core/phase-error.js';

const dataDir = mkdtempSync(join(tmpdir(), 'slipway-build-phase-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));
const layout = new DeployLayout(dataDir);

const SANDBOX: SandboxIdentity = {
  // The test's own user: what the phase hands over stays readable without root.
  user: { uid: process.getuid!(), gid: process.getgid!() },
  limits: { memoryBytes: 256 * 1024 * 1024, pids: 256, cpuShares: 512 },
  flavor: 'pico',
  readOnlyPaths: [],
};

const INSTALL = { label: 'install', argv: ['npm', 'ci'], skipWhenUnchanged: { files: ['package-lock.json'], settings: ['npm 10'] } };
const COMPILE = { label: 'build', argv: ['npm', 'run', 'build'], cwd: 'web' };

function planOf(overrides: Partial<BuildPlan> = {}): BuildPlan {
  return {
    provider: 'fake',
    toolchain: [],
    env: { NODE_ENV: 'production' },
    files: [],
    build: [INSTALL, COMPILE],
    beforeStart: [],
    start: { label: 'start', argv: ['node', 'server.js'] },
    cacheDirs: ['node_modules'],
    cacheDirsInRelease: ['node_modules'],
    warnings: [],
    notes: [],
    ...overrides,
  };
}

function providerOf(plan: BuildPlan, own: Partial<Provider> = {}): Provider {
  return {
    name: 'fake',
    label: 'Fake apps',
    detect: async () => true,
    notDetected: () => ({ message: 'No fake.json found.', hint: 'Commit a fake.json.' }),
    plan: async () => plan,
    ...own,
  };
}

interface Harness {
  app: AppRow;
  runner: FakeDeployRunner;
  lines: string[];
  networks: { acquired: number; released: number };
  build(options?: { appVars?: Record<string, string>; signal?: AbortSignal }): Promise<BuiltRelease>;
  /** A new export of the commit, as the receive phase leaves it. */
  receive(files?: Record<string, string>): Promise<void>;
}

async function harness(provider: Provider): Promise<Harness> {
  const app = { id: `app_${randomUUID()}`, name: 'shop', type: 'fake' } as AppRow;
  const runner = new FakeDeployRunner();
  const lines: string[] = [];
  const networks = { acquired: 0, released: 0 };
  const deps: BuildPhaseDeps = {
    runner,
    layout,
    providers: new Map([['fake', provider]]),
    catalog: { versions: async () => [] },
    toolchainCacheDir: join(dataDir, 'toolchains'),
    buildNetworks: {
      acquireBuildNetwork: async () => {
        networks.acquired++;
        return { namespacePath: '/run/netns/build-test', address: '10.0.0.9', release: async () => void networks.released++ };
      },
    },
    gatewayAddress: '10.0.0.1',
    machineEnv: { HTTPS_PROXY: 'http://proxy.test:3128' },
  };
  const h: Harness = {
    app,
    runner,
    lines,
    networks,
    async receive(files = { 'package.json': '{}', 'package-lock.json': '{"lockfileVersion":3}' }) {
      const dir = layout.buildFolder(app.id);
      await rm(dir, { recursive: true, force: true });
      await mkdir(join(dir, 'web'), { recursive: true });
      for (const [name, content] of Object.entries(files)) await writeFile(join(dir, name), content);
    },
    build: ({ appVars = {}, signal = new AbortController().signal } = {}) =>
      buildRelease(deps, {
        app,
        deployment: { id: `deployment_${randomUUID()}`, commit_sha: 'c'.repeat(40) } as Deployment,
        appVars,
        sandbox: SANDBOX,
        log: (line) => lines.push(line),
        signal,
      }),
  };
  await h.receive();
  return h;
}

/** What an install leaves: the folder the release and the cache keep. */
const installs = (h: Harness) => async () => {
  await mkdir(join(layout.buildFolder(h.app.id), 'node_modules', 'left-pad'), { recursive: true });
};

const argvs = (h: Harness) => h.runner.steps.map((s) => s.argv);

async function rejectsWith(promise: Promise<unknown>, check: (error: PhaseError) => void): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof PhaseError, String(error));
    check(error);
    return true;
  });
}

describe('the build phase runs the plan', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness(providerOf(planOf()));
  });

  test("each command is an argv array run in its own sandbox, in the build folder, as the app's user", async () => {
    const release = await h.build({ appVars: { CC_PRE_BUILD_HOOK: 'echo pre', CC_POST_BUILD_HOOK: 'echo post', API_KEY: 's3cret' } });
    const buildDir = layout.buildFolder(h.app.id);
    assert.deepEqual(argvs(h), [
      ['bash', '-c', 'echo pre'],
      ['npm', 'ci'],
      ['npm', 'run', 'build'],
      ['bash', '-c', 'echo post'],
    ]);
    assert.deepEqual(
      h.runner.steps.map((s) => s.cwd),
      [buildDir, buildDir, join(buildDir, 'web'), buildDir],
    );
    assert.equal(new Set(h.runner.steps.map((s) => s.id)).size, 4, 'one sandbox per command');
    const [step] = h.runner.steps;
    assert.equal(step!.hostname, 'build');
    assert.equal(step!.env.API_KEY, 's3cret', "the app's variables");
    assert.equal(step!.env.HTTPS_PROXY, 'http://proxy.test:3128', "the machine's network settings");
    assert.equal(step!.env.NODE_ENV, 'production', "the plan's");
    assert.equal(step!.env.HOME, layout.buildHome(h.app.id));
    assert.deepEqual(h.runner.handedOver, [buildDir, layout.appCacheFolder(h.app.id)]);
    assert.deepEqual(h.networks, { acquired: 1, released: 1 });
    assert.deepEqual(release.start, ['node', 'server.js']);
    assert.ok(h.lines.includes('==> [build] Build plan'));
    assert.ok(h.lines.includes('No build cache for this toolchain: performing a full build.'));
    assert.ok(h.lines.includes('==> [build] install: npm ci'));
  });

  test('the build credentials are gone once the build ended, and never in the build folder', async () => {
    await h.build();
    const secrets = layout.buildSecretsFolder(h.app.id);
    assert.ok(h.runner.owned.includes(secrets));
    await assert.rejects(readdir(secrets), { code: 'ENOENT' });
  });

  test('an install whose inputs did not change is skipped: its folder comes from the cache', async () => {
    h.runner.script((argv) => argv[1] === 'ci', { during: installs(h) });
    await h.build();
    assert.deepEqual(argvs(h), [
      ['npm', 'ci'],
      ['npm', 'run', 'build'],
    ]);

    await h.receive();
    h.runner.steps.length = 0;
    await h.build();
    assert.deepEqual(argvs(h), [['npm', 'run', 'build']], 'only the build step ran');
    assert.ok(h.lines.includes('A build cache exists for this toolchain: reusing it.'));
    assert.ok(
      h.lines.includes(
        'node_modules kept from a build with the same package files, lockfile, settings and tool versions: install skipped.',
      ),
    );
    assert.deepEqual(await readdir(join(layout.buildFolder(h.app.id), 'node_modules')), ['left-pad']);

    await h.receive({ 'package.json': '{}', 'package-lock.json': '{"lockfileVersion":3,"packages":{"x":{}}}' });
    h.runner.steps.length = 0;
    await h.build();
    assert.deepEqual(
      argvs(h),
      [
        ['npm', 'ci'],
        ['npm', 'run', 'build'],
      ],
      'a changed lockfile installs again',
    );
  });

  test('a failed build is not reused: the next one installs again', async () => {
    h.runner.script((argv) => argv[1] === 'ci', { during: installs(h) }).script((argv) => argv[1] === 'run', { exitCode: 1 });
    await assert.rejects(h.build());
    await h.receive();
    h.runner.steps.length = 0;
    await assert.rejects(h.build());
    assert.deepEqual(argvs(h)[0], ['npm', 'ci']);
  });
});

test('nothing left to run (the install skipped, no other step): no build network is set up', async () => {
  const h = await harness(providerOf(planOf({ build: [INSTALL] })));
  h.runner.script(() => true, { during: installs(h) });
  await h.build();
  await h.receive();
  await h.build();
  assert.equal(h.runner.steps.length, 1);
  assert.deepEqual(h.networks, { acquired: 1, released: 1 });
});

describe('a failed step says why, and what to do', () => {
  test('out of memory: the limit and flavour, and how to give the build more', async () => {
    const h = await harness(providerOf(planOf()));
    h.runner.script((argv) => argv[1] === 'run', { exitCode: null, signal: 'SIGKILL', outOfMemory: true });
    await rejectsWith(h.build(), (error) => {
      assert.equal(error.phase, 'build');
      assert.equal(error.message, 'build was killed: out of memory: limit 256 MiB (flavour pico).');
      assert.match(error.hint!, /slipway scale --build-flavor <name>/);
    });
  });

  test("the provider's explanation of the output, when it recognises it", async () => {
    const seen: string[][] = [];
    const h = await harness(
      providerOf(planOf(), {
        explainFailure: (output) => {
          seen.push([...output]);
          return output.some((l) => l.includes('ERESOLVE')) ? 'Fix the peer dependency conflict, then push again.' : undefined;
        },
      }),
    );
    h.runner
      .script((argv) => argv[1] === 'ci', { out: ['added 3 packages'] })
      .script((argv) => argv[1] === 'run', { err: ['npm ERR! code ERESOLVE'], exitCode: 1 });
    await rejectsWith(h.build(), (error) => {
      assert.equal(error.message, 'build exited with code 1.');
      assert.equal(error.hint, 'Fix the peer dependency conflict, then push again.');
    });
    assert.deepEqual(seen, [['added 3 packages', 'npm ERR! code ERESOLVE']], 'the output of every step so far');
    assert.ok(h.lines.includes('npm ERR! code ERESOLVE'), 'the output is in the deploy log');
  });

  test('a git server refusing the build: set CC_SSH_PRIVATE_KEY', async () => {
    const h = await harness(providerOf(planOf()));
    h.runner.script((argv) => argv[1] === 'ci', { err: ['git@example.com: Permission denied (publickey).'], exitCode: 128 });
    await rejectsWith(h.build(), (error) => {
      assert.equal(error.message, 'install exited with code 128.');
      assert.match(error.hint!, /set CC_SSH_PRIVATE_KEY/);
    });
    assert.deepEqual(argvs(h), [['npm', 'ci']], 'the next step never ran');
  });

  test('anything else: the output above shows the cause', async () => {
    const h = await harness(providerOf(planOf()));
    h.runner.script((argv) => argv[1] === 'run', { exitCode: 2 });
    await rejectsWith(h.build(), (error) => assert.equal(error.hint, 'The output above shows the cause.'));
  });

  test('the provider does not recognise the commit, or cannot plan it: a build failure with its hint', async () => {
    const undetected = await harness(providerOf(planOf(), { detect: async () => false }));
    await rejectsWith(undetected.build(), (error) => {
      assert.deepEqual([error.phase, error.message, error.hint], ['build', 'No fake.json found.', 'Commit a fake.json.']);
    });
    const unplanned = await harness(
      providerOf(planOf(), {
        plan: async () => {
          throw new PlanError('No start command.', 'Add scripts.start to package.json.');
        },
      }),
    );
    await rejectsWith(unplanned.build(), (error) =>
      assert.deepEqual([error.phase, error.hint], ['build', 'Add scripts.start to package.json.']),
    );
    assert.equal(unplanned.runner.steps.length, 0, 'nothing ran');
  });
});

describe('the start command', () => {
  test('found after the build, when only the build can name it', async () => {
    const h = await harness(providerOf(planOf(), { resolveStart: async () => ['target/universal/stage/bin/shop'] }));
    const release = await h.build();
    assert.deepEqual(release.start, ['target/universal/stage/bin/shop']);
    assert.ok(h.lines.includes('Start command, found after the build: target/universal/stage/bin/shop'));
  });

  test('the same as planned: not printed again', async () => {
    const h = await harness(providerOf(planOf(), { resolveStart: async () => ['node', 'server.js'] }));
    await h.build();
    assert.ok(!h.lines.some((l) => l.startsWith('Start command, found after the build')));
  });

  test('not found: the build fails with what the provider says to do', async () => {
    const h = await harness(
      providerOf(planOf(), {
        resolveStart: async () => {
          throw new PlanError('sbt stage made no start script.', 'Add the sbt-native-packager plugin.');
        },
      }),
    );
    await rejectsWith(h.build(), (error) => assert.deepEqual([error.phase, error.hint], ['build', 'Add the sbt-native-packager plugin.']));
  });
});

test('the release carries the plan: before-start commands, variables, cron jobs; secret files are removed', async () => {
  const plan = planOf({
    env: { NODE_ENV: 'production' },
    files: [{ path: '.npmrc', content: '//registry.test/:_authToken=abc\n', secret: true }],
    beforeStart: [{ label: 'prestart', argv: ['npm', 'run', 'prestart'] }],
    start: { label: 'start', argv: ['node', 'server.js'], env: { NPM_CONFIG_SCRIPT_SHELL: '/bin/bash' } },
  });
  const h = await harness(providerOf(plan));
  const release = await h.build();
  assert.deepEqual(release.beforeStart, [['npm', 'run', 'prestart']]);
  assert.deepEqual(release.planEnv, { NODE_ENV: 'production', NPM_CONFIG_SCRIPT_SHELL: '/bin/bash' });
  assert.deepEqual(release.cron, []);
  assert.ok(h.lines.includes('Wrote .npmrc (secret: removed before the release starts)'));
  assert.ok(!(await readdir(layout.buildFolder(h.app.id))).includes('.npmrc'));
});

describe('cancellation', () => {
  test('mid-build: the step is killed, no later step runs, the network and credentials are released', async () => {
    const h = await harness(providerOf(planOf()));
    const cancel = new AbortController();
    h.runner.script((argv) => argv[1] === 'ci', { during: () => cancel.abort('the user cancelled') });
    await assert.rejects(h.build({ signal: cancel.signal }), (error: unknown) => {
      assert.ok(error instanceof DeploymentCancelled);
      assert.equal(error.message, 'the user cancelled');
      return true;
    });
    assert.deepEqual(argvs(h), [['npm', 'ci']]);
    assert.deepEqual(h.networks, { acquired: 1, released: 1 });
    await assert.rejects(readdir(layout.buildSecretsFolder(h.app.id)), { code: 'ENOENT' });
  });
});
