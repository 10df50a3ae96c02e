/** How the whole suite deals its files out to lanes (scripts/test-lanes.mjs). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error: a plain ES module of the runner, without types
import { dealFiles, readFileTimes, secondsOf } from '../../scripts/test-lanes.mjs';

type Lane = { files: string[]; seconds: number };
const deal = dealFiles as (
  files: string[],
  count: number,
  times: Map<string, number>,
  groupOf?: (f: string) => string | undefined,
) => Lane[];

test('the longest files go first, each to the lane shortest so far, and every file to exactly one lane', () => {
  const times = new Map([
    ['test/a.test.ts', 100],
    ['test/b.test.ts', 60],
    ['test/c.test.ts', 50],
    ['test/d.test.ts', 40],
  ]);
  const lanes = deal(['test/a.test.ts', 'test/b.test.ts', 'test/c.test.ts', 'test/d.test.ts'], 2, times);
  assert.deepEqual(
    lanes.map((l) => l.files),
    [
      ['test/a.test.ts', 'test/d.test.ts'],
      ['test/b.test.ts', 'test/c.test.ts'],
    ],
  );
  assert.deepEqual(
    lanes.map((l) => l.seconds),
    [140, 110],
  );
});

test("files of one group share a lane, and a file without a measured time gets its kind's guess", () => {
  const times = new Map([['test/x-swarm.test.ts', 10]]);
  const groupOf = (f: string) => (f.includes('swarm') ? 'swarm' : undefined);
  const lanes = deal(['test/x-swarm.test.ts', 'test/new.test.ts', 'src/y-swarm.test.ts', 'src/z.test.ts'], 2, times, groupOf);
  const swarmLane = lanes.find((l) => l.files.includes('test/x-swarm.test.ts'))!;
  assert.ok(swarmLane.files.includes('src/y-swarm.test.ts'));
  assert.equal((secondsOf as (f: string, t: Map<string, number>) => number)('test/new.test.ts', times), 30);
  assert.equal(lanes.flatMap((l) => l.files).length, 4);
});

test('the times file is read as seconds and path, one per line; what is not such a line is left out', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lanes-'));
  try {
    const file = join(dir, 'times.tsv');
    writeFileSync(file, '12\ttest/a.test.ts\nnot a line\n3\tsrc/b.test.ts\n');
    const times = (readFileTimes as (p: string) => Map<string, number>)(file);
    assert.deepEqual(
      [...times.entries()],
      [
        ['test/a.test.ts', 12],
        ['src/b.test.ts', 3],
      ],
    );
    assert.equal((readFileTimes as (p: string) => Map<string, number>)(join(dir, 'missing.tsv')).size, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
