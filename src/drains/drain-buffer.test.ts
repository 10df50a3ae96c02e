import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DrainBuffer } from './drain-buffer.js';

const MiB = 1024 * 1024;

function drain(buffer: DrainBuffer): string[] {
  const got: string[] = [];
  for (let batch = buffer.read(100, 64 * 1024); batch; batch = buffer.read(100, 64 * 1024)) {
    got.push(...batch.lines);
    buffer.ack(batch);
  }
  return got;
}

test('lines come out in order, and an unacknowledged batch is read again', () => {
  const buffer = new DrainBuffer(mkdtempSync(join(tmpdir(), 'drain-buffer-')), MiB);
  for (let i = 0; i < 1000; i++) buffer.push(`line ${i}`);
  const first = buffer.read(10, 64 * 1024)!;
  assert.deepEqual(
    first.lines,
    Array.from({ length: 10 }, (_, i) => `line ${i}`),
  );
  // Not acknowledged (the receiver failed): the same lines again.
  assert.deepEqual(buffer.read(10, 64 * 1024)!.lines, first.lines);
  assert.equal(buffer.waiting(), 1000);
  assert.deepEqual(
    drain(buffer),
    Array.from({ length: 1000 }, (_, i) => `line ${i}`),
  );
  assert.equal(buffer.waiting(), 0);
  assert.equal(buffer.dropped, 0);
});

test('what was not delivered survives a new buffer on the same folder', () => {
  const dir = mkdtempSync(join(tmpdir(), 'drain-buffer-'));
  const before = new DrainBuffer(dir, MiB);
  for (let i = 0; i < 50_000; i++) before.push(`line ${i}`);
  const batch = before.read(100, 64 * 1024)!;
  before.ack(batch);
  before.read(100, 64 * 1024); // read but not delivered
  before.close();
  const after = new DrainBuffer(dir, MiB);
  assert.equal(after.waiting(), 49_900);
  const rest = drain(after);
  assert.equal(rest.length, 49_900);
  assert.equal(rest[0], 'line 100');
  assert.equal(rest.at(-1), 'line 49999');
});

test('a full buffer drops the oldest lines, counts them, and keeps the newest in order', () => {
  const dir = mkdtempSync(join(tmpdir(), 'drain-buffer-'));
  const buffer = new DrainBuffer(dir, MiB);
  let told = 0;
  buffer.onDrop = (lines) => (told += lines);
  const total = 200_000;
  for (let i = 0; i < total; i++) buffer.push(`line ${String(i).padStart(7, '0')} ${'x'.repeat(20)}`);
  buffer.flush();
  assert.ok(buffer.dropped > 0, 'some lines were dropped');
  assert.equal(told, buffer.dropped);
  const kept = drain(buffer);
  assert.equal(kept.length + buffer.dropped, total);
  const numbers = kept.map((l) => Number(l.split(' ')[1]));
  assert.equal(numbers[0], buffer.dropped, 'the oldest went first');
  assert.equal(numbers.at(-1), total - 1);
  for (let i = 1; i < numbers.length; i++) assert.equal(numbers[i], numbers[i - 1]! + 1);
  // The bound holds on disk: segments beyond it were removed.
  assert.ok(readdirSync(dir).filter((n) => n.endsWith('.ndjson')).length <= 9);
  // The count survives a restart.
  assert.equal(new DrainBuffer(dir, MiB).dropped, buffer.dropped);
});

test('a line longer than one read still comes out whole', () => {
  const buffer = new DrainBuffer(mkdtempSync(join(tmpdir(), 'drain-buffer-')), MiB);
  const long = 'y'.repeat(200 * 1024);
  buffer.push('short');
  buffer.push(long);
  buffer.push('after');
  assert.deepEqual(drain(buffer), ['short', long, 'after']);
});

test('lines the disk refuses are counted as dropped, and the buffer goes on', () => {
  const dir = mkdtempSync(join(tmpdir(), 'drain-buffer-'));
  const buffer = new DrainBuffer(dir, MiB);
  // Where the first segment would be written stands a folder: the write fails (as on a full disk).
  mkdirSync(join(dir, '000000000000.ndjson'));
  const errors: Error[] = [];
  buffer.onError = (error) => errors.push(error);
  for (let i = 0; i < 3; i++) buffer.push(`line ${i}`);
  assert.doesNotThrow(() => buffer.flush());
  assert.equal(buffer.dropped, 3);
  assert.equal(errors.length, 1);
  assert.equal(buffer.waiting(), 0);
});
