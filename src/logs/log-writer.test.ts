import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId } from '../core/ids.js';
import { LogFiles } from './log-files.js';
import { LogWriter } from './log-writer.js';

function setup(maxFileBytes: number, rotatedFiles: number) {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-log-writer-'));
  const files = new LogFiles(dir, newId('app'));
  let writes = 0;
  const errors: string[] = [];
  let idle: () => void = () => undefined;
  const writer = new LogWriter({
    files,
    limits: { maxFileBytes, rotatedFiles },
    onWritten: () => writes++,
    onIdle: () => idle(),
    onError: (e, lost) => errors.push(`${e.message} (${lost})`),
  });
  const settled = () => new Promise<void>((resolve) => (idle = resolve));
  return { dir, files, writer, writes: () => writes, errors, settled };
}

const line = (n: number) => `{"n":${String(n).padStart(5, '0')}}\n`; // 12 bytes

test('lines queued in one turn are written in a few batched writes, not one write each', async () => {
  const s = setup(10 * 1024 * 1024, 1);
  const done = s.settled();
  for (let n = 0; n < 10_000; n++) s.writer.push(line(n));
  assert.equal(s.writer.queued > 0, true, 'push only queues');
  await done;
  assert.ok(s.writes() <= 2, `10 000 lines took ${s.writes()} writes`);
  const text = readFileSync(s.files.current, 'utf8');
  assert.equal(text, Array.from({ length: 10_000 }, (_, n) => line(n)).join(''));
  assert.deepEqual(s.errors, []);
});

test('rotation keeps at most `rotatedFiles` older files, each within the size, of whole lines in order', async () => {
  const s = setup(120, 2); // 10 lines per file
  for (let n = 0; n < 95; n++) {
    const done = s.settled();
    s.writer.push(line(n));
    await done;
  }
  const names = readdirSync(s.dir).sort();
  assert.deepEqual(names, [`${s.files.key}.ndjson`, `${s.files.key}.ndjson.1`, `${s.files.key}.ndjson.2`]);
  const read = (p: string) => readFileSync(p, 'utf8');
  assert.equal(read(s.files.current), Array.from({ length: 5 }, (_, i) => line(90 + i)).join(''));
  assert.equal(read(s.files.rotated(1)), Array.from({ length: 10 }, (_, i) => line(80 + i)).join(''));
  assert.equal(read(s.files.rotated(2)), Array.from({ length: 10 }, (_, i) => line(70 + i)).join(''));
  for (const name of names) assert.ok(statSync(join(s.dir, name)).size <= 120);
});

test('a batch larger than the room left is split at line boundaries across a rotation', async () => {
  const s = setup(120, 3);
  const done = s.settled();
  for (let n = 0; n < 35; n++) s.writer.push(line(n));
  await done;
  const all = [3, 2, 1].map((r) => readFileSync(s.files.rotated(r), 'utf8')).join('') + readFileSync(s.files.current, 'utf8');
  assert.equal(all, Array.from({ length: 35 }, (_, n) => line(n)).join(''));
  for (const r of [3, 2, 1]) assert.equal(statSync(s.files.rotated(r)).size, 120);
});

test('with no rotated files kept, a full file is replaced', async () => {
  const s = setup(120, 0);
  const done = s.settled();
  for (let n = 0; n < 25; n++) s.writer.push(line(n));
  await done;
  assert.deepEqual(readdirSync(s.dir), [`${s.files.key}.ndjson`]);
  assert.equal(readFileSync(s.files.current, 'utf8'), Array.from({ length: 5 }, (_, i) => line(20 + i)).join(''));
});

test('rotated files beyond a lowered count are removed at the next rotation', async () => {
  const s = setup(120, 1);
  for (const r of [1, 2, 3, 4]) writeFileSync(s.files.rotated(r), line(r));
  writeFileSync(s.files.current, Array.from({ length: 10 }, (_, n) => line(n)).join(''));
  const done = s.settled();
  s.writer.push(line(99));
  await done;
  assert.deepEqual(readdirSync(s.dir).sort(), [`${s.files.key}.ndjson`, `${s.files.key}.ndjson.1`]);
  assert.equal(readFileSync(s.files.current, 'utf8'), line(99));
});

test('log files are readable by their owner only, also ones an earlier version left open to all', async () => {
  const s = setup(1024, 1);
  writeFileSync(s.files.current, line(0), { mode: 0o644 });
  const done = s.settled();
  s.writer.push(line(1));
  await done;
  assert.equal(statSync(s.files.current).mode & 0o777, 0o600);
  const fresh = setup(1024, 1);
  const freshDone = fresh.settled();
  fresh.writer.push(line(1));
  await freshDone;
  assert.equal(statSync(fresh.files.current).mode & 0o777, 0o600);
});

test('a task given to exclusive runs at once when the writer is idle, else between two writes', async () => {
  const s = setup(1024 * 1024, 1);
  let ran = false;
  const result = s.writer.exclusive(() => {
    ran = true;
    return 'now';
  });
  assert.equal(ran, true, 'ran before exclusive returned');
  assert.equal(await result, 'now');
  s.writer.push(line(1)); // a write is under way now
  const sizes: number[] = [];
  const task = s.writer.exclusive(() => sizes.push(statSync(s.files.current).size));
  assert.deepEqual(sizes, [], 'waits for the write under way');
  await task;
  assert.deepEqual(sizes, [12]);
});

test('a write that fails is reported with the lines lost, and the writer goes on', async () => {
  const s = setup(1024, 1);
  writeFileSync(join(s.dir, 'elsewhere'), '');
  symlinkSync(join(s.dir, 'elsewhere'), s.files.current);
  const done = s.settled();
  s.writer.push(line(1));
  s.writer.push(line(2));
  await done;
  assert.equal(s.errors.length, 1);
  assert.match(s.errors[0]!, /ELOOP.*\(2\)$/, 'a link at the log path is never followed');
  assert.equal(readFileSync(join(s.dir, 'elsewhere'), 'utf8'), '');
  unlinkSync(s.files.current);
  const next = s.settled();
  s.writer.push(line(3));
  await next;
  assert.equal(readFileSync(s.files.current, 'utf8'), line(3));
});
