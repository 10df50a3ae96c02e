import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FixedVersionCatalog, NpmVersionCatalog, plainVersions } from './catalog.js';

test('plainVersions drops prereleases, build tags and garbage, and sorts', () => {
  assert.deepEqual(plainVersions(['4.1.0-pkg1', '1.10.0', '1.2.0', 'x', '1.2.0', '2.0.0+build', '1.3.0-canary.1']), ['1.2.0', '1.10.0']);
});

test('FixedVersionCatalog returns its lists, and [] for other tools', async () => {
  const catalog = new FixedVersionCatalog({ node: ['24.11.0'] });
  assert.deepEqual(await catalog.versions('node'), ['24.11.0']);
  assert.deepEqual(await catalog.versions('bun'), []);
});

test('NpmVersionCatalog lists real versions from the configured registry', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'slipway-catalog-'));
  const catalog = new NpmVersionCatalog(dir);
  const [node, yarn, bun] = await Promise.all([catalog.versions('node'), catalog.versions('yarn'), catalog.versions('bun')]);
  assert.ok(node.includes('24.11.0'));
  assert.ok(!node.some((v) => v.includes('-')), 'no prereleases');
  assert.ok(yarn.includes('1.22.22'), 'Yarn 1 from the yarn package');
  assert.ok(
    yarn.some((v) => v.startsWith('4.')),
    'berry from @yarnpkg/cli-dist',
  );
  assert.ok(!yarn.some((v) => v.includes('-')));
  assert.ok(bun.includes('1.3.1'));
  assert.ok(!bun.some((v) => v.includes('canary')));
  await assert.rejects(catalog.versions('java'), /installed on the machine/);
});

test('NpmVersionCatalog answers from its disk cache within the TTL and asks again after it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'slipway-catalog-'));
  await new NpmVersionCatalog(dir).versions('deno');
  const file = join(dir, '_catalog', 'deno__linux-x64-glibc.json');
  const cached = JSON.parse(await readFile(file, 'utf8'));
  assert.ok(cached.versions.length > 10);
  // Plant a marker version: only a read of the disk cache can return it.
  await writeFile(file, JSON.stringify({ ...cached, versions: ['0.0.1'] }));
  assert.deepEqual(await new NpmVersionCatalog(dir).versions('deno'), ['0.0.1']);
  const refreshed = await new NpmVersionCatalog(dir, { ttlMs: 0 }).versions('deno');
  assert.ok(refreshed.length > 10 && !refreshed.includes('0.0.1'));
});

test('NpmVersionCatalog falls back to a stale list when the registry is unreachable, and explains when it has none', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'slipway-catalog-'));
  await new NpmVersionCatalog(dir).versions('pnpm');
  const saved = { registry: process.env.npm_config_registry, retries: process.env.npm_config_fetch_retries };
  t.after(() => {
    for (const [key, value] of [
      ['npm_config_registry', saved.registry],
      ['npm_config_fetch_retries', saved.retries],
    ] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });
  // Port 9 (discard) on loopback: nothing listens, so npm fails fast.
  process.env.npm_config_registry = 'http://127.0.0.1:9/';
  process.env.npm_config_fetch_retries = '0';
  const stale = await new NpmVersionCatalog(dir, { ttlMs: 0 }).versions('pnpm');
  assert.ok(stale.includes('10.20.0'));
  const empty = await mkdtemp(join(tmpdir(), 'slipway-catalog-'));
  await assert.rejects(new NpmVersionCatalog(empty).versions('pnpm'), /Could not list the versions of pnpm[\s\S]*npm config get registry/);
});
