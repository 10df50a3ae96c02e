import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PlanError } from '../../core/errors.js';
import { ensureSbtLauncher, launcherFetchArgv, launcherPath } from './launcher.js';
import { runTool } from './run-tool.js';

let cache: string;
before(async () => {
  cache = await mkdtemp(join(tmpdir(), 'slipway-sbt-launcher-'));
});
after(async () => {
  await rm(cache, { recursive: true, force: true });
});

describe('sbt launcher (real Maven)', () => {
  it('asks Maven for exactly org.scala-sbt:sbt-launch:<version>', () => {
    assert.deepEqual(launcherFetchArgv('1.13.0', '/x'), [
      'mvn',
      '-B',
      '-q',
      '--no-transfer-progress',
      'dependency:copy',
      '-Dartifact=org.scala-sbt:sbt-launch:1.13.0',
      '-DoutputDirectory=/x',
    ]);
  });

  it('fetches the jar once, then serves it from the cache', async () => {
    const lines: string[] = [];
    const first = await ensureSbtLauncher(cache, '1.13.0', (l) => lines.push(l));
    assert.equal(first.jarPath, launcherPath(cache, '1.13.0'));
    assert.ok((await stat(first.jarPath)).size > 1_000_000);
    const version = await runTool(['java', '-jar', first.jarPath, '--launcher-version'], { cwd: cache, timeoutMs: 60_000 });
    // The jar runs: sbt-launch <v> embeds launcher code of its own (older) version number.
    assert.match(version.stdout + version.stderr, /sbt launcher version \d+\.\d+\.\d+/);
    const again = await ensureSbtLauncher(cache, '1.13.0', (l) => lines.push(l));
    assert.equal(again.jarPath, first.jarPath);
    assert.match(lines.at(-1)!, /cached/);
  });

  it('refuses a version that is not one, without running Maven', async () => {
    await assert.rejects(
      ensureSbtLauncher(cache, '1.13.0:evil'),
      (e: unknown) => e instanceof PlanError && /not an sbt version/.test(e.message),
    );
  });

  it('a version Maven cannot find fails with what Maven said and what to check', async () => {
    const error = await ensureSbtLauncher(cache, '0.0.1').then(
      () => assert.fail('sbt-launch 0.0.1 does not exist'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof PlanError);
    assert.match(error.message, /could not be fetched/);
    assert.match(error.hint ?? '', /project\/build.properties/);
  });
});
