import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { AccessLogReceiver, enlargePipe, FULL_READ_BYTES, makeAccessPipe, READ_PAUSE_MS, restAfterRead } from './access-log.js';
import type { AccessRecord } from '../router.js';

test('the receiver rests after a partial read and reads on at once while a backlog waits', () => {
  assert.equal(restAfterRead(120), READ_PAUSE_MS);
  assert.equal(restAfterRead(FULL_READ_BYTES - 1), READ_PAUSE_MS);
  assert.equal(restAfterRead(FULL_READ_BYTES), 0);
});

/** Writes as HAProxy does, on the non-blocking write end, but waits where HAProxy would drop. */
async function writeAll(fd: number, text: string): Promise<void> {
  let data = Buffer.from(text);
  while (data.length > 0) {
    try {
      data = data.subarray(writeSync(fd, data));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      await sleep(2);
    }
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Closed by the test already.
  }
}

/** The pipe as the router's supervisor holds it: made, opened read-write (HAProxy's fd 3 is this), enlarged. */
async function supervisedPipe(dir: string): Promise<{ path: string; writeEnd: number }> {
  const path = join(dir, 'access-log.pipe');
  await makeAccessPipe(path);
  const writeEnd = openSync(path, constants.O_RDWR | constants.O_NONBLOCK);
  assert.ok(await enlargePipe(writeEnd), 'the pipe is enlarged');
  return { path, writeEnd };
}

test('a burst of many reads arrives whole through the pipe: every line once, none cut at a read boundary', async () => {
  const records: AccessRecord[] = [];
  const receiver = new AccessLogReceiver(
    (backend) => (backend === 'app0' ? 'app_one' : undefined),
    (record) => records.push(record),
  );
  const dir = await mkdtemp(join(tmpdir(), 'slipway-access-log-'));
  const { path, writeEnd } = await supervisedPipe(dir);
  receiver.open(path);
  const lines = 50_000;
  try {
    let text = '';
    for (let i = 0; i < lines; i++) {
      text += `app0 1700000000.${String(i % 1000).padStart(3, '0')} 10.0.0.1 GET /page/${i}?q=é 200 12 3 10.200.0.2:8080 0 shop.example.com\n`;
      // The 404 and ACME backends never log, but a stray line of another backend is dropped, not counted.
      if (i % 1000 === 0) text += 'unknown_host 1700000000.000 10.0.0.1 GET / 404 0 0 - 0 nowhere.test\n';
    }
    await writeAll(writeEnd, text);
    for (let waited = 0; records.length < lines && waited < 20_000; waited += 20) await sleep(20);
    assert.equal(records.length, lines);
    assert.deepEqual(
      records.map((record) => record.path),
      Array.from({ length: lines }, (_, i) => `/page/${i}?q=é`),
    );
    assert.equal(records[7]!.instance, '10.200.0.2:8080');
    assert.equal(records[7]!.host, 'shop.example.com');
  } finally {
    receiver.stop();
    closeQuietly(writeEnd);
    await rm(dir, { recursive: true, force: true });
  }
});

test('the pipe holds ten thousand lines while the daemon does not read (the default pipe held under a thousand)', async () => {
  const receiver = new AccessLogReceiver(
    () => undefined,
    () => undefined,
  );
  const dir = await mkdtemp(join(tmpdir(), 'slipway-access-log-'));
  const { path, writeEnd } = await supervisedPipe(dir);
  receiver.open(path);
  try {
    // The event loop is held here, as a busy daemon's would be: nothing is read meanwhile.
    const line = Buffer.from('app0 1700000000.000 10.0.0.1 GET /a/typical/path 200 1234 3 10.200.0.2:8080 0 shop.example.com\n');
    let written = 0;
    try {
      for (;;) written += writeSync(writeEnd, line);
    } catch (error) {
      assert.equal((error as NodeJS.ErrnoException).code, 'EAGAIN');
    }
    assert.ok(written / line.length >= 10_000, `the pipe took ${written / line.length} lines before it was full`);
  } finally {
    receiver.stop();
    closeQuietly(writeEnd);
    await rm(dir, { recursive: true, force: true });
  }
});

test('draining reads the lines HAProxy wrote before it exited', async () => {
  const records: AccessRecord[] = [];
  const receiver = new AccessLogReceiver(
    () => 'app_one',
    (record) => records.push(record),
  );
  const dir = await mkdtemp(join(tmpdir(), 'slipway-access-log-'));
  const { path, writeEnd } = await supervisedPipe(dir);
  try {
    receiver.open(path);
    // A first line and a rest: the receiver is then resting when the last lines arrive.
    await writeAll(writeEnd, 'app0 1700000000.000 10.0.0.1 GET /first 200 1 0 10.200.0.2:8080 0 a.test\n');
    await sleep(5);
    const last = Array.from({ length: 99 }, (_, i) => `app0 1700000000.000 10.0.0.1 GET /${i} 200 1 0 10.200.0.2:8080 0 a.test\n`);
    await writeAll(writeEnd, last.join(''));
    // HAProxy and its supervisor exit: the pipe's last writer is gone.
    closeSync(writeEnd);
    await receiver.drain(1000);
    assert.equal(records.length, 100);
  } finally {
    receiver.stop();
    closeQuietly(writeEnd);
    await rm(dir, { recursive: true, force: true });
  }
});
