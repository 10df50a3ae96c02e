/**
 * `slipway plan` shows the paths a build would use without fetching anything: previewToolchain
 * fills the same tokens as prepareToolchain and says which tools are not in the cache yet.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { BuildPlan } from '../providers/plan.js';
import { previewSbtPlan } from '../providers/sbt/prepare.js';
import { PLACEHOLDER } from '../providers/sbt/placeholders.js';
import { APP_CACHE_TOKEN, previewToolchain } from './prepare-toolchain.js';

const root = mkdtempSync(join(tmpdir(), 'slipway-preview-'));
after(() => rmSync(root, { recursive: true, force: true }));

function plan(provider: string, toolchain: BuildPlan['toolchain'], argv: string[]): BuildPlan {
  return {
    provider,
    toolchain,
    env: {},
    files: [],
    build: [{ label: 'install', argv }],
    beforeStart: [],
    start: { label: 'start', argv: ['node', 'server.js'] },
    cacheDirs: [],
    warnings: [],
    notes: [],
  };
}

test('a tool not in the cache is named where the build will put it, as not yet installed, and nothing is fetched', async () => {
  const toolchainCacheDir = join(root, 'empty-cache');
  mkdirSync(toolchainCacheDir);
  const appCacheDir = join(root, 'apps', 'app_1');
  const made = plan(
    'node',
    [
      { name: 'node', version: '24.11.0', reason: 'default' },
      { name: 'pnpm', version: '10.34.9', reason: 'declared' },
    ],
    ['pnpm', 'install', `--store-dir=${APP_CACHE_TOKEN}/pnpm-store`],
  );
  const shown = await previewToolchain(made, {}, { toolchainCacheDir, appCacheDir });
  assert.deepEqual(shown.build[0]!.argv, ['pnpm', 'install', `--store-dir=${appCacheDir}/pnpm-store`]);
  assert.deepEqual(shown.notes, [
    `node 24.11.0 runs from ${toolchainCacheDir}/node/24.11.0/bin (not yet installed: the build fetches it).`,
    `pnpm 10.34.9 runs from ${toolchainCacheDir}/pnpm/10.34.9/bin (not yet installed: the build fetches it).`,
  ]);
  assert.deepEqual(readdirSync(toolchainCacheDir), [], 'nothing was fetched');
});

test('a tool in the cache is named at its path, in the words the deploy log uses', async () => {
  const toolchainCacheDir = join(root, 'cache-with-node');
  mkdirSync(join(toolchainCacheDir, 'node', '24.11.0', 'bin'), { recursive: true });
  writeFileSync(join(toolchainCacheDir, 'node', '24.11.0', 'bin', 'node'), '');
  const shown = await previewToolchain(
    plan('node', [{ name: 'node', version: '24.11.0', reason: 'default' }], ['npm', 'install']),
    {},
    { toolchainCacheDir, appCacheDir: join(root, 'a') },
  );
  assert.deepEqual(shown.notes, [`node 24.11.0 runs from ${toolchainCacheDir}/node/24.11.0/bin.`]);
});

test('sbt: the launcher and repositories file at their cache paths, the staged binary still named after the build', async () => {
  const toolchainCacheDir = join(root, 'sbt-cache');
  const appCacheDir = join(root, 'apps', 'app_2');
  const made = plan(
    'sbt',
    [{ name: 'sbt', version: '1.13.0', reason: 'build.properties' }],
    [
      'java',
      `-Dsbt.repository.config=${PLACEHOLDER.repositories}`,
      `-Dsbt.boot.directory=${PLACEHOLDER.appCache}/sbt/boot`,
      '-jar',
      PLACEHOLDER.launcher,
      'stage',
    ],
  );
  const launcher = `${toolchainCacheDir}/sbt-launch/1.13.0/sbt-launch-1.13.0.jar`;
  const before = await previewSbtPlan(made, { toolchainCacheDir, appCacheDir });
  assert.deepEqual(before.build[0]!.argv, [
    'java',
    `-Dsbt.repository.config=${toolchainCacheDir}/sbt/repositories`,
    `-Dsbt.boot.directory=${appCacheDir}/sbt/boot`,
    '-jar',
    launcher,
    'stage',
  ]);
  assert.deepEqual(before.notes, [
    `sbt launcher 1.13.0: ${launcher} (not yet installed: the build does it).`,
    `sbt's repositories file: ${toolchainCacheDir}/sbt/repositories (not yet written: the build does it).`,
  ]);
  mkdirSync(join(toolchainCacheDir, 'sbt-launch', '1.13.0'), { recursive: true });
  writeFileSync(launcher, 'PK');
  assert.equal((await previewSbtPlan(made, { toolchainCacheDir, appCacheDir })).notes[0], `sbt launcher 1.13.0: ${launcher}.`);
});
