import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildLimits, DEFAULT_BUILD_FLAVOR, DEFAULT_INSTANCE_FLAVOR, FLAVORS, flavorNamed } from './flavors.js';

test('the reference flavours, memory and CPU share growing with size', () => {
  assert.deepEqual(FLAVORS.map((f) => [f.name, f.memoryBytes / 1024 / 1024]), [['pico', 256], ['nano', 512], ['XS', 1024], ['S', 2048], ['M', 4096]]);
  for (let i = 1; i < FLAVORS.length; i++) assert.ok(FLAVORS[i]!.cpuShares > FLAVORS[i - 1]!.cpuShares);
  const nano = flavorNamed(DEFAULT_INSTANCE_FLAVOR);
  assert.ok(nano.pids >= 256 && nano.pids <= 4096, 'the default process limit is between 256 and 4096');
  assert.equal(flavorNamed(DEFAULT_BUILD_FLAVOR).name, 'S');
});

test('names are case-insensitive; unknown ones are refused with the list', () => {
  assert.equal(flavorNamed('xs').name, 'XS');
  assert.equal(flavorNamed(' Pico ').name, 'pico');
  assert.throws(() => flavorNamed('huge'), (e: Error & { hint?: string }) => /Unknown flavour "huge"/.test(e.message) && /pico \(256 MiB\).*M \(4 GiB\)/.test(e.hint ?? ''));
  assert.throws(() => flavorNamed(undefined), /Unknown flavour/);
});

test('a build of any flavour gets less CPU than any serving instance, and its own memory', () => {
  for (const f of FLAVORS) {
    const build = buildLimits(f);
    assert.equal(build.memoryBytes, f.memoryBytes);
    for (const instance of FLAVORS) assert.ok(build.cpuShares < instance.cpuShares);
  }
});
