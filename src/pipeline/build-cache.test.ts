import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BuildPlan } from '../providers/plan.js';
import { RefusedPathError, repositoryTree } from '../sandbox/untrusted-tree.js';
import { BuildCache, cacheKey } from './build-cache.js';
import { installInputsDigest } from './install-inputs.js';

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
  const node24 = plan([
    { name: 'node', version: '24.11.0' },
    { name: 'npm', version: '11.6.1' },
  ]);

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

/** A folder of root's that a link in the app's trees points at; it must stay as it is. */
function rootFolder(): { path: string; untouched(): void } {
  const path = mkdtempSync(join(tmpdir(), 'slipway-root-folder-'));
  mkdirSync(join(path, 'npm'));
  writeFileSync(join(path, 'npm', 'kept'), 'root data');
  mkdirSync(join(path, 'node_modules'));
  return {
    path,
    untouched: () => {
      assert.deepEqual(readdirSync(path).sort(), ['node_modules', 'npm']);
      assert.equal(readFileSync(join(path, 'npm', 'kept'), 'utf8'), 'root data');
    },
  };
}

test('a committed .slipway-cache linked out of the repository fails the build by name, and moves nothing', async () => {
  const cache = new BuildCache(mkdtempSync(join(tmpdir(), 'slipway-app-cache-')));
  const node24 = plan([{ name: 'node', version: '24.11.0' }]);
  await cache.restore(node24, mkdtempSync(join(tmpdir(), 'slipway-build-')));
  await cache.save(node24, builtFolder('cached'), true);

  const victim = rootFolder();
  const build = mkdtempSync(join(tmpdir(), 'slipway-build-'));
  symlinkSync(victim.path, join(build, '.slipway-cache'));
  const error = await cache.restore(node24, build).then(
    () => assert.fail('restored through a link'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof RefusedPathError);
  assert.match(error.message, /^\.slipway-cache \(on the way to \.slipway-cache\/npm\) is a symbolic link to an absolute path/);
  assert.match(error.hint ?? '', /remove \.slipway-cache from the repository/);
  assert.ok(!error.message.includes(victim.path));
  victim.untouched();

  // Made by the build itself (after the check), the link is never followed when saving either.
  const built = mkdtempSync(join(tmpdir(), 'slipway-build-'));
  symlinkSync(victim.path, join(built, '.slipway-cache'));
  symlinkSync(join(victim.path, 'node_modules'), join(built, 'node_modules'));
  await cache.save(node24, built, true);
  victim.untouched();
  assert.ok(lstatSync(join(built, '.slipway-cache')).isSymbolicLink());
});

test("a link the build left in the app's cache is discarded, never moved from or written through", async () => {
  const appCache = mkdtempSync(join(tmpdir(), 'slipway-app-cache-'));
  const cache = new BuildCache(appCache);
  const node24 = plan([{ name: 'node', version: '24.11.0' }]);
  const victim = rootFolder();
  // The key the next build expects, in a folder of root's: the build links build-cache to it.
  writeFileSync(join(victim.path, 'key'), cacheKey(node24));
  symlinkSync(victim.path, join(appCache, 'build-cache'));
  const build = mkdtempSync(join(tmpdir(), 'slipway-build-'));
  assert.equal(await cache.restore(node24, build), false, 'the linked cache is not used');
  assert.equal(existsSync(join(build, '.slipway-cache/npm')), false);
  assert.ok(lstatSync(join(appCache, 'build-cache')).isDirectory(), 'the link was replaced by a fresh cache');
  assert.equal(readFileSync(join(victim.path, 'key'), 'utf8'), cacheKey(node24));
  assert.deepEqual(readdirSync(victim.path).sort(), ['key', 'node_modules', 'npm']);

  // A link at build-cache/dirs (made during the build) takes nothing out of the release.
  symlinkSync(victim.path, join(appCache, 'build-cache', 'dirs'));
  const built = builtFolder('built');
  await cache.save(node24, built, true);
  assert.equal(readFileSync(join(built, '.slipway-cache/npm/index'), 'utf8'), 'built', 'not moved through the link');
  assert.deepEqual(readdirSync(join(victim.path, 'npm')), ['kept']);
});

test('the key holds the toolchain majors and the inputs the plan names: a new exact version of one of them starts over', async () => {
  const pnpm = (version: string): BuildPlan => ({
    ...plan([{ name: 'node', version: '24.11.0' }]),
    cacheKeyInputs: [`pnpm ${version}`, 'without devDependencies'],
  });
  assert.equal(cacheKey(pnpm('10.34.9')), 'node24 | pnpm 10.34.9 | without devDependencies');
  assert.equal(cacheKey(plan([{ name: 'node', version: '24.11.0' }])), 'node24', 'a plan without inputs keeps the key it always had');
  assert.equal(cacheKey({ ...pnpm('1'), cacheKeyInputs: ['a\nb'] }), 'node24 | a_b', 'one line, whatever an input holds');

  const cache = new BuildCache(mkdtempSync(join(tmpdir(), 'slipway-app-cache-')));
  await cache.restore(pnpm('10.34.9'), mkdtempSync(join(tmpdir(), 'slipway-build-')));
  await cache.save(pnpm('10.34.9'), builtFolder('10.34.9'), true);
  const same = mkdtempSync(join(tmpdir(), 'slipway-build-'));
  assert.equal(await cache.restore(pnpm('10.34.9'), same), true);
  await cache.save(pnpm('10.34.9'), same, true);
  const next = mkdtempSync(join(tmpdir(), 'slipway-build-'));
  assert.equal(await cache.restore(pnpm('10.35.0'), next), false, 'another pnpm patch release discards node_modules');
  assert.equal(existsSync(join(next, 'node_modules')), false);
});

test('folders the plan no longer names are dropped from the cache instead of staying forever', async () => {
  const appCache = mkdtempSync(join(tmpdir(), 'slipway-app-cache-'));
  const cache = new BuildCache(appCache);
  const withModules = plan([{ name: 'node', version: '24.11.0' }]);
  await cache.restore(withModules, mkdtempSync(join(tmpdir(), 'slipway-build-')));
  await cache.save(withModules, builtFolder('one'), true);
  const packageCacheOnly: BuildPlan = { ...withModules, cacheDirs: ['.slipway-cache/npm'], cacheDirsInRelease: [] };
  const build = mkdtempSync(join(tmpdir(), 'slipway-build-'));
  assert.equal(await cache.restore(packageCacheOnly, build), true);
  assert.equal(existsSync(join(build, 'node_modules')), false);
  assert.equal(existsSync(join(appCache, 'build-cache/dirs')), false, 'nothing left behind in the cache');
  await cache.save(packageCacheOnly, build, true);
  assert.deepEqual(readdirSync(join(appCache, 'build-cache/dirs/.slipway-cache')), ['npm']);
});

/** A plan whose npm install may be skipped, for a project folder with package.json and a lockfile. */
function skippablePlan(npmVersion = '11.6.1', dev = false): BuildPlan {
  const node24 = plan([
    { name: 'node', version: '24.11.0' },
    { name: 'npm', version: npmVersion },
  ]);
  const inputs = {
    files: ['package.json', 'package-lock.json'],
    settings: [`npm ${npmVersion}`, dev ? 'with devDependencies' : 'without devDependencies'],
  };
  return {
    ...node24,
    build: [{ label: 'npm install', argv: ['npm', 'install', ...(dev ? [] : ['--omit=dev'])], skipWhenUnchanged: inputs }],
  };
}

function project(lockfile: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-build-'));
  writeFileSync(join(dir, 'package.json'), '{"dependencies":{"dep":"1.0.0"}}');
  writeFileSync(join(dir, 'package-lock.json'), lockfile);
  return dir;
}

/** One build as the deployer runs it: restore, decide, "install" (unless skipped), save. */
async function build(appCache: string, buildPlan: BuildPlan, dir: string, options: { succeeds?: boolean } = {}): Promise<boolean> {
  const cache = new BuildCache(appCache);
  await cache.restore(buildPlan, dir);
  const inputs = await installInputsDigest(buildPlan, repositoryTree(dir));
  const skipped = await cache.installUnchanged(buildPlan, dir, inputs);
  if (!skipped) {
    mkdirSync(join(dir, 'node_modules/dep'), { recursive: true });
    writeFileSync(join(dir, 'node_modules/dep/index.js'), 'installed');
  }
  await cache.save(buildPlan, dir, options.succeeds ?? true, inputs);
  return skipped;
}

test('the install is skipped only when the kept node_modules came from the same lockfile, manager version and devDependencies choice', async () => {
  const appCache = mkdtempSync(join(tmpdir(), 'slipway-app-cache-'));
  assert.equal(await build(appCache, skippablePlan(), project('lock 1')), false, 'the first build installs');
  const second = project('lock 1');
  assert.equal(await build(appCache, skippablePlan(), second), true, 'same inputs: skipped');
  assert.equal(readFileSync(join(second, 'node_modules/dep/index.js'), 'utf8'), 'installed', 'the release has the kept node_modules');
  assert.equal(await build(appCache, skippablePlan(), project('lock 2')), false, 'a changed lockfile installs');
  assert.equal(await build(appCache, skippablePlan(), project('lock 2')), true);
  assert.equal(await build(appCache, skippablePlan('11.6.2'), project('lock 2')), false, 'another npm installs');
  assert.equal(await build(appCache, skippablePlan('11.6.2', true), project('lock 2')), false, 'devDependencies wanted: installs');
  const changedPackage = project('lock 2');
  writeFileSync(join(changedPackage, 'package.json'), '{"dependencies":{"dep":"1.0.1"}}');
  assert.equal(await build(appCache, skippablePlan('11.6.2', true), changedPackage), false, 'a changed package.json installs');
});

test('after a failed build, with a committed node_modules or a garbled record, the install runs', async () => {
  const appCache = mkdtempSync(join(tmpdir(), 'slipway-app-cache-'));
  await build(appCache, skippablePlan(), project('lock'));
  await build(appCache, skippablePlan(), project('lock'), { succeeds: false });
  assert.equal(await build(appCache, skippablePlan(), project('lock')), false, 'the failed build left no record');
  assert.equal(await build(appCache, skippablePlan(), project('lock')), true);

  // An install that wrote no node_modules (no dependency), then a commit that brings its own.
  const noDependencies = mkdtempSync(join(tmpdir(), 'slipway-app-cache-'));
  const first = new BuildCache(noDependencies);
  const empty = project('lock');
  await first.restore(skippablePlan(), empty);
  await first.save(skippablePlan(), empty, true, await installInputsDigest(skippablePlan(), repositoryTree(empty)));
  const again = project('lock');
  assert.equal(
    await new BuildCache(noDependencies).installUnchanged(
      skippablePlan(),
      again,
      await installInputsDigest(skippablePlan(), repositoryTree(again)),
    ),
    true,
    'nothing to install, again',
  );
  const committed = project('lock');
  mkdirSync(join(committed, 'node_modules'));
  const cache = new BuildCache(noDependencies);
  await cache.restore(skippablePlan(), committed);
  assert.equal(
    await cache.installUnchanged(skippablePlan(), committed, await installInputsDigest(skippablePlan(), repositoryTree(committed))),
    false,
    'a node_modules the record does not know',
  );

  writeFileSync(join(appCache, 'build-cache/installed-from'), '{"inputs": 1');
  assert.equal(await build(appCache, skippablePlan(), project('lock')), false, 'a garbled record');
});

test('the install digest refuses a lockfile that is a link out of the repository, so the install runs', async () => {
  const dir = project('lock');
  rmSync(join(dir, 'package-lock.json'));
  symlinkSync('/etc/hostname', join(dir, 'package-lock.json'));
  assert.equal(await installInputsDigest(skippablePlan(), repositoryTree(dir)), undefined);
  assert.equal(
    await installInputsDigest({ ...skippablePlan(), cacheDirsInRelease: [] }, repositoryTree(project('lock'))),
    undefined,
    'nothing installed is kept',
  );
});
