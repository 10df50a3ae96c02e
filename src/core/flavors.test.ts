import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildCpu,
  buildLimits,
  cpuUnits,
  DEFAULT_BUILD_FLAVOR,
  DEFAULT_INSTANCE_FLAVOR,
  describeFlavor,
  FLAVORS,
  flavorList,
  flavorNamed,
} from './flavors.js';

const MiB = 1024 * 1024;

test('the reference flavours with their memory, process limit and CPU share', () => {
  assert.deepEqual(
    FLAVORS.map((f) => [f.name, f.memoryBytes / MiB, f.pids, f.cpuShares, f.cpuWeight]),
    [
      ['pico', 256, 256, 256, 25],
      ['nano', 512, 512, 512, 50],
      ['XS', 1024, 1024, 1024, 100],
      ['S', 2048, 2048, 2048, 200],
      ['M', 4096, 4096, 4096, 400],
      ['L', 8192, 4096, 8192, 800],
      ['XL', 16384, 4096, 16384, 1600],
    ],
  );
});

test('memory and CPU share grow with size, in both cgroup units', () => {
  for (let i = 1; i < FLAVORS.length; i++) {
    const [smaller, larger] = [FLAVORS[i - 1]!, FLAVORS[i]!];
    assert.ok(larger.memoryBytes > smaller.memoryBytes, `${larger.name} has more memory than ${smaller.name}`);
    assert.ok(
      larger.cpuShares > smaller.cpuShares && larger.cpuWeight > smaller.cpuWeight,
      `${larger.name} has a larger CPU share than ${smaller.name}`,
    );
    assert.ok(larger.pids >= smaller.pids);
  }
});

test('cpu.shares and cpu.weight come from one relative number and stay in the kernel ranges', () => {
  assert.deepEqual(cpuUnits(1), { cpu: 1, cpuShares: 1024, cpuWeight: 100 });
  assert.deepEqual(cpuUnits(0.001), { cpu: 0.001, cpuShares: 2, cpuWeight: 1 });
  assert.deepEqual(cpuUnits(1000), { cpu: 1000, cpuShares: 262144, cpuWeight: 10000 });
  for (const f of FLAVORS) assert.deepEqual(cpuUnits(f.cpu), { cpu: f.cpu, cpuShares: f.cpuShares, cpuWeight: f.cpuWeight });
});

test('defaults: nano for instances, S for builds; the default process limit is between 256 and 4096', () => {
  const nano = flavorNamed(DEFAULT_INSTANCE_FLAVOR);
  assert.equal(nano.name, 'nano');
  assert.ok(nano.pids >= 256 && nano.pids <= 4096);
  assert.equal(flavorNamed(DEFAULT_BUILD_FLAVOR).name, 'S');
});

test('names are case-insensitive on input and canonical on output', () => {
  assert.equal(flavorNamed('xs').name, 'XS');
  assert.equal(flavorNamed('s').name, 'S');
  assert.equal(flavorNamed('xL').name, 'XL');
  assert.equal(flavorNamed(' Pico ').name, 'pico');
  assert.equal(flavorNamed('NANO').name, 'nano');
});

test('an unknown name is refused with the list of valid ones', () => {
  const listing = 'pico (256 MiB), nano (512 MiB), XS (1 GiB), S (2 GiB), M (4 GiB), L (8 GiB), XL (16 GiB)';
  assert.equal(flavorList(), listing);
  const refused = (value: unknown, seen: RegExp) =>
    assert.throws(
      () => flavorNamed(value),
      (e: Error & { hint?: string; status?: number }) => {
        assert.match(e.message, seen);
        assert.equal(e.hint, `Flavours: ${listing}.`);
        assert.equal(e.status, 400);
        return true;
      },
    );
  refused('huge', /^Unknown flavour "huge"\.$/);
  refused('', /^Unknown flavour ""\.$/);
  refused(undefined, /^Unknown flavour \(undefined\)\.$/);
  refused(null, /^Unknown flavour \(null\)\.$/);
  refused(4, /^Unknown flavour \(number\)\.$/);
  refused('x'.repeat(500), /^Unknown flavour "x{40}…"\.$/);
});

test('a build of any flavour keeps its memory and tasks but gets less CPU than any serving instance', () => {
  for (const f of FLAVORS) {
    const build = buildLimits(f);
    assert.equal(build.name, f.name);
    assert.equal(build.memoryBytes, f.memoryBytes);
    assert.equal(build.pids, f.pids);
    for (const instance of FLAVORS) {
      assert.ok(build.cpuShares < instance.cpuShares, `a ${f.name} build below a ${instance.name} instance (cpu.shares)`);
      assert.ok(build.cpuWeight < instance.cpuWeight, `a ${f.name} build below a ${instance.name} instance (cpu.weight)`);
    }
  }
  assert.deepEqual(buildCpu(), { cpu: 0.0625, cpuShares: 64, cpuWeight: 6 });
});

test('a flavour is described with its memory', () => {
  assert.equal(describeFlavor(flavorNamed('m')), 'M (4 GiB)');
});
