/**
 * The parts of the machine the whole suite needs besides the Debian packages (Go for Pebble, a
 * JDK, the Docker Swarm): setup installs them or says what is missing, and under CI=true a
 * missing part fails setup and the test run instead of letting its tests skip. Go is hidden
 * with a PATH of its own, so nothing on this machine is removed to check it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
