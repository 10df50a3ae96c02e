/** `slipway plan` on a fake runner: the export it asks for, the lines it prints, the scratch folder it leaves behind (none). */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppRow } from '../store/apps.js';
import type { BuildPlan, Provider } from '../providers/plan.js';
import { PlanError } from '../core/errors.js';
import type { SandboxIdentity } from '../sandbox/sandbox-identity.js';
import { FakeDeployRunner } from '../../test/support/fakes/fake-deploy-runner.js';
import { DeployLayout } from '../storage/deploy-layout.js';
import { type PlanPreviewDeps, previewPlan } from './plan-preview.js';

const dataDir = mkdtempSync(join(tmpdir(), 'slipway-plan-preview-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

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
const app = { id: 'app_preview', name: 'shop', type: 'fake' } as AppRow;
const commit = 'e'.repeat(40);

function deps(provider: Partial<Provider>, runner: FakeDeployRunner, vars: Record<string, string> = {}): PlanPreviewDeps {
  return {
    runner,
    layout: new DeployLayout(dataDir),
    providers: new Map([
      [
        'fake',
        {
          name: 'fake',
          label: 'Fake',
          detect: async () => true,
          notDetected: () => ({ message: 'No fake.json.', hint: 'Commit one.' }),
          plan: async () => PLAN,
          ...provider,
        },
      ],
    ]),
    catalog: { versions: async () => [] },
    toolchainCacheDir: join(dataDir, 'toolchains'),
    sandboxes: { instance: async () => SANDBOX, build: async () => SANDBOX },
    repoOf: (appId) => `/data/repos/${appId}.git`,
    appEnv: () => vars,
  };
}

test('the commit is exported into a scratch folder, planned, printed with hooks and secrets hidden, then removed', async () => {
  const runner = new FakeDeployRunner();
  const preview = await previewPlan(
    deps({}, runner, { CC_PRE_BUILD_HOOK: 'echo token=s3cr3t-value', API_TOKEN: 's3cr3t-value' }),
    app,
    commit,
  );
  const [exported] = runner.steps;
  assert.deepEqual(exported!.argv.slice(0, 3), ['git', '--git-dir', '/data/repos/app_preview.git']);
  assert.equal(exported!.argv.at(-3), commit);
  assert.equal(runner.steps.length, 1, 'nothing but the export runs');
  assert.deepEqual(
    preview.plan.build.map((c) => c.argv),
    [
      ['bash', '-c', 'echo token=s3cr3t-value'],
      ['npm', 'ci'],
    ],
  );
  assert.ok(preview.lines.length > 0);
  assert.ok(!preview.lines.join('\n').includes('s3cr3t-value'), preview.lines.join('\n'));
  assert.deepEqual(readdirSync(join(dataDir, 'apps', app.id, 'scratch')), [], 'the scratch folder is gone');
});

test('a commit the provider does not recognise: a PlanError with its hint, and no folder left', async () => {
  await assert.rejects(previewPlan(deps({ detect: async () => false }, new FakeDeployRunner()), app, commit), (error: unknown) => {
    assert.ok(error instanceof PlanError);
    assert.deepEqual([error.message, error.hint], ['No fake.json.', 'Commit one.']);
    return true;
  });
  assert.deepEqual(readdirSync(join(dataDir, 'apps', app.id, 'scratch')), []);
});

test('an export that fails says what git said', async () => {
  const runner = new FakeDeployRunner().script((argv) => argv[0] === 'git', { err: ['fatal: bad object'], exitCode: 128 });
  await assert.rejects(
    previewPlan(deps({}, runner), app, commit),
    /Could not export commit e{40}: git exited with code 128: fatal: bad object/,
  );
});
