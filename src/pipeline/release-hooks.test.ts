/** The run-phase hooks on a fake runner: what runs where, and which failure changes the deployment. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AppRow } from '../store/apps.js';
import type { SandboxIdentity } from '../sandbox/sandbox-identity.js';
import { FakeDeployRunner } from '../../test/support/fakes/fake-deploy-runner.js';
import type { HookName } from './hooks.js';
import { PhaseError } from '../core/phase-error.js';
import { runReleaseHook } from './release-hooks.js';
import { DeployLayout } from '../storage/deploy-layout.js';
import type { ReleaseSpec } from '../serving/release-spec.js';

const SANDBOX: SandboxIdentity = {
  user: { uid: 60_001, gid: 60_001 },
  limits: { memoryBytes: 512 * 1024 * 1024, pids: 256, cpuShares: 512 },
  flavor: 'nano',
  readOnlyPaths: [],
};
const app = { id: 'app_hooks', name: 'shop', type: 'node' } as AppRow;
const release: ReleaseSpec = {
  deploymentId: 'deployment_00000000-0000-4000-8000-000000000001',
  commit: 'a'.repeat(40),
  provider: 'node',
  releaseDir: '/data/releases/app_hooks/deployment_00000000-0000-4000-8000-000000000001',
  start: ['node', 'server.js'],
  beforeStart: [],
  planEnv: {},
  toolPath: [],
};

function run(name: HookName, appVars: Record<string, string>, runner = new FakeDeployRunner()) {
  const lines: string[] = [];
  const networks = { acquired: 0, released: 0 };
  const done = runReleaseHook(
    {
      runner,
      sandboxes: { instance: async () => SANDBOX, build: async () => SANDBOX },
      buildNetworks: {
        acquireBuildNetwork: async () => {
          networks.acquired++;
          return { namespacePath: '/run/netns/hook', address: '10.0.0.9', release: async () => void networks.released++ };
        },
      },
      runtime: { environmentFor: () => ({ PORT: '8080', APP_HOME: release.releaseDir }) },
      layout: new DeployLayout('/data'),
    },
    { app, release, name, appVars, log: (line) => lines.push(line) },
  );
  return { done, runner, lines, networks };
}

test('a hook runs its script with bash, in the release, with the environment an instance gets', async () => {
  const { done, runner, lines, networks } = run('CC_PRE_RUN_HOOK', { CC_PRE_RUN_HOOK: './migrate.sh' });
  await done;
  assert.deepEqual(
    runner.steps.map((s) => [s.argv, s.cwd, s.hostname, s.env.APP_HOME]),
    [[['bash', '-c', './migrate.sh'], release.releaseDir, 'hook', release.releaseDir]],
  );
  assert.ok(lines.includes('==> [run] CC_PRE_RUN_HOOK: bash -c ./migrate.sh'));
  assert.deepEqual(networks, { acquired: 1, released: 1 });
});

test('a hook the app does not set runs nothing', async () => {
  const { done, runner, networks } = run('CC_PRE_RUN_HOOK', { CC_PRE_RUN_HOOK: '  ' });
  await done;
  assert.deepEqual([runner.steps, networks.acquired], [[], 0]);
});

test('a failing CC_PRE_RUN_HOOK fails the run phase: no instance starts', async () => {
  const runner = new FakeDeployRunner().script(() => true, { exitCode: 3 });
  const { done, networks } = run('CC_PRE_RUN_HOOK', { CC_PRE_RUN_HOOK: 'exit 3' }, runner);
  await assert.rejects(done, (error: unknown) => {
    assert.ok(error instanceof PhaseError);
    assert.equal(error.phase, 'run');
    assert.equal(error.message, 'CC_PRE_RUN_HOOK exited with code 3; no instance was started.');
    return true;
  });
  assert.equal(networks.released, 1);
});

test('a failing CC_RUN_SUCCEEDED_HOOK only says so', async () => {
  const runner = new FakeDeployRunner().script(() => true, { exitCode: 1 });
  const { done, lines } = run('CC_RUN_SUCCEEDED_HOOK', { CC_RUN_SUCCEEDED_HOOK: 'false' }, runner);
  await done;
  assert.ok(lines.includes('CC_RUN_SUCCEEDED_HOOK exited with code 1 (the outcome of the deployment stays as it is).'));
});
