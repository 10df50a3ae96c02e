import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OutputFileTail, parseOutputLine } from './output-file.js';
import { waitUntil } from '../../test/support/wait.js';

const line = (stream: 'stdout' | 'stderr', tag: 'F' | 'P', text: string) =>
  `2026-11-26T12:00:00.000000000+00:00 ${stream} ${tag} ${text}\n`;

test('a k8s-file line gives its stream, whether it continues, and its text as written', () => {
  assert.deepEqual(parseOutputLine(line('stdout', 'F', 'hello  world').trimEnd()), { stream: 'out', partial: false, text: 'hello  world' });
  assert.deepEqual(parseOutputLine(line('stderr', 'P', 'part').trimEnd()), { stream: 'err', partial: true, text: 'part' });
  assert.deepEqual(parseOutputLine('2026-11-26T12:00:00Z stdout F '), { stream: 'out', partial: false, text: '' });
  assert.equal(parseOutputLine('not a line of the format'), undefined);
});

test('lines are read as they come, pieces are joined, a replaced file is finished then the new one read from its start', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-output-'));
  const file = join(dir, 'output.log');
  const seen: string[] = [];
  const tail = new OutputFileTail(file, join(dir, 'output.position'), (stream, text) => seen.push(`${stream}:${text}`));
  tail.start();
  writeFileSync(file, line('stdout', 'F', 'one') + line('stderr', 'P', 'long ') + line('stderr', 'F', 'line'));
  await waitUntil('the first lines', () => seen.length === 2, 2000);
  assert.deepEqual(seen, ['out:one', 'err:long line']);
  // conmon past --log-size-max: the old file gets its last line, a new one takes the path.
  appendFileSync(file, line('stdout', 'F', 'last of the old file'));
  renameSync(file, join(dir, 'old.log'));
  writeFileSync(file, line('stdout', 'F', 'first of the new file'));
  await waitUntil('the lines around the replacement', () => seen.length === 4, 2000);
  assert.deepEqual(seen.slice(2), ['out:last of the old file', 'out:first of the new file']);
  tail.stop();
});

test('a reader started after another stopped goes on where it stopped: nothing twice, nothing lost', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-output-'));
  const file = join(dir, 'output.log');
  const position = join(dir, 'output.position');
  const first: string[] = [];
  const a = new OutputFileTail(file, position, (_, text) => first.push(text));
  writeFileSync(file, line('stdout', 'F', 'before'));
  a.start();
  await waitUntil('the line before the stop', () => first.length === 1, 2000);
  a.stop();
  // Written while no daemon read.
  appendFileSync(file, line('stdout', 'F', 'meanwhile'));
  const second: string[] = [];
  const b = new OutputFileTail(file, position, (_, text) => second.push(text));
  b.start();
  await waitUntil('the line written meanwhile', () => second.length === 1, 2000);
  appendFileSync(file, line('stdout', 'F', 'after'));
  await waitUntil('the line after', () => second.length === 2, 2000);
  b.stop();
  assert.deepEqual(first, ['before']);
  assert.deepEqual(second, ['meanwhile', 'after']);
});
