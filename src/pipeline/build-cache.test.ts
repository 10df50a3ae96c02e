import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BuildPlan } from '../providers/plan.js';
import { BuildCache } from './build-cache.js';

function plan(toolchain: Array<{ name: 'node' | 'npm'; version: string }>): BuildPlan {
  return {
    provider: 'node',
    toolchain: toolchain.map((t) => ({ ...t, reason: 'test' })),
    env: {},
    files: [],
    build: [],
    beforeStart: [],
    start: { label: 'start', argv: ['node', 'server.js'] },
    cacheDirs: ['.slipway-cache/npm', 'node_modules'],
    cacheDirsInRelease: ['node_modules'],
    warnings: [],
    notes: [],
  };
}

/** A build folder as a build leaves it: a package cache and installed modules (with a .bin symlink). */
function builtFolder(marker: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-build-cache-'));
  mkdirSync(join(dir, '.slipway-cache/npm'), { recursive: true });
  writeFileSync(join(dir, '.slipway-cache/npm/index'), marker);
  mkdirSync(join(dir, 'node_modules/dep/bin'), { recursive: true });
  mkdirSync(join(dir, 'node_modules/.bin'));
  writeFileSync(join(dir, 'node_modules/dep/bin/run.js'), marker);
  symlinkSync('../dep/bin/run.js', join(dir, 'node_modules/.bin/run'));
  return dir;
}

test('package caches move out of the release; node_modules is copied, so the release keeps it and the next build starts from it', async () => {
  const cache = new BuildCache(mkdtempSync(join(tmpdir(), 'slipway-app-cache-')));
  const node24 = plan([{ name: 'node', version: '24.11.0' }, { name: 'npm', version: '11.6.1' }]);

  const first = mkdtempSync(join(tmpdir(), 'slipway-build-'));
  assert.equal(await cache.restore(node24, first), false, 'nothing cached yet');
  const release = builtFolder('one');
  await cache.save(node24, release, true);
  assert.equal(existsSync(join(release, '.slipway-cache/npm')), false, 'the package cache is not part of the release');
  assert.equal(readFileSync(join(release, 'node_modules/dep/bin/run.js'), 'utf8'), 'one', 'the release keeps its node_modules');

  const second = mkdtempSync(join(tmpdir(), 'slipway-build-'));
  assert.equal(await cache.restore(node24, second), true);
  assert.equal(readFileSync(join(second, '.slipway-cache/npm/index'), 'utf8'), 'one');
  assert.equal(readFileSync(join(second, 'node_modules/dep/bin/run.js'), 'utf8'), 'one');
  assert.equal(readlinkSync(join(second, 'node_modules/.bin/run')), '../dep/bin/run.js', 'symlinks stay symlinks');
});

test('after a failed build node_modules is not kept (a half-done install is never reused), the package cache is', async () => {
  const cache = new BuildCache(mkdtempSync(join(tmpdir(), 'slipway-app-cache-')));
  const node24 = plan([{ name: 'node', version: '24.11.0' }]);
  await cache.restore(node24, mkdtempSync(join(tmpdir(), 'slipway-build-')));
  await cache.save(node24, builtFolder('failed'), false);
  const next = mkdtempSync(join(tmpdir(), 'slipway-build-'));
  assert.equal(await cache.restore(node24, next), true);
  assert.equal(existsSync(join(next, '.slipway-cache/npm/index')), true);
  assert.equal(existsSync(join(next, 'node_modules')), false);
});

test('a new Node.js major starts from an empty cache (native modules are built for one ABI)', async () => {
  const cache = new BuildCache(mkdtempSync(join(tmpdir(), 'slipway-app-cache-')));
  const node24 = plan([{ name: 'node', version: '24.11.0' }]);
  await cache.restore(node24, mkdtempSync(join(tmpdir(), 'slipway-build-')));
  await cache.save(node24, builtFolder('24'), true);
  const next = mkdtempSync(join(tmpdir(), 'slipway-build-'));
  assert.equal(await cache.restore(plan([{ name: 'node', version: '22.11.0' }]), next), false);
  assert.equal(existsSync(join(next, 'node_modules')), false);
});
