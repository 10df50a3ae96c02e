import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId } from '../core/ids.js';
import { LogHub, MAX_LINE_LENGTH, type LogEntry } from './log-hub.js';
import { readTail } from './tail-reader.js';
import { closeAll } from './log-files.js';

const MiB = 1024 * 1024;

function hub(options: ConstructorParameters<typeof LogHub>[1] = {}) {
  const dir = join(mkdtempSync(join(tmpdir(), 'slipway-log-hub-')), 'logs');
  return { dir, logs: new LogHub(dir, options) };
}

async function stored(logs: LogHub, key: string, options = {}): Promise<LogEntry[]> {
  const { snapshot } = await logs.snapshot(key);
  const chunks: Buffer[] = [];
  for await (const chunk of readTail(snapshot, options)) chunks.push(chunk);
  return Buffer.concat(chunks)
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as LogEntry);
}

/** Waits until nothing of the log is left in memory (every line reached the disk). */
async function flushed(logs: LogHub, key: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const { snapshot } = await logs.snapshot(key);
    closeAll(snapshot.files);
    if (snapshot.pending.length === 0) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`the log ${key} was not written within 2 s`);
}

test("the logs folder is the daemon's alone: 0700, files 0600", async () => {
  const { dir, logs } = hub();
  const key = newId('app');
  logs.append(key, 'out', 'hello');
  await flushed(logs, key);
  assert.equal(statSync(dir).mode & 0o777, 0o700);
  assert.equal(statSync(join(dir, `${key}.ndjson`)).mode & 0o777, 0o600);
});

test('files an earlier version left readable by all are restricted', async () => {
  const { dir, logs } = hub();
  const old = join(dir, `${newId('deployment')}.ndjson`);
  writeFileSync(old, '', { mode: 0o644 });
  writeFileSync(`${old}.1`, '', { mode: 0o644 });
  await logs.restrictExistingFiles();
  assert.equal(statSync(old).mode & 0o777, 0o600);
  assert.equal(statSync(`${old}.1`).mode & 0o777, 0o600);
});

test('append returns at once; what was appended is in the snapshot, on disk or still queued', async () => {
  const { logs } = hub();
  const key = newId('app');
  for (let n = 0; n < 5000; n++) logs.append(key, 'out', `line ${n}`);
  const entries = await stored(logs, key);
  assert.deepEqual(
    entries.map((e) => e.line),
    Array.from({ length: 5000 }, (_, n) => `line ${n}`),
  );
  assert.equal(entries[0]!.stream, 'out');
  assert.match(entries[0]!.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
});

test('a follower sees every line exactly once, whichever side of the snapshot it fell on', async () => {
  const { logs } = hub();
  const key = newId('app');
  let n = 0;
  const producer = setInterval(() => {
    for (let i = 0; i < 200; i++) logs.append(key, 'out', `line ${n++}`);
  }, 1);
  await new Promise((r) => setTimeout(r, 30));
  const live: string[] = [];
  let ended = false;
  const { snapshot, unsubscribe } = await logs.snapshot(key, () => (entry) => (entry ? live.push(entry.line) : (ended = true)));
  const chunks: Buffer[] = [];
  for await (const chunk of readTail(snapshot)) chunks.push(chunk);
  await new Promise((r) => setTimeout(r, 30));
  clearInterval(producer);
  logs.finish(key);
  unsubscribe!();
  const before = Buffer.concat(chunks)
    .toString('utf8')
    .trimEnd()
    .split('\n')
    .map((l) => (JSON.parse(l) as LogEntry).line);
  assert.ok(before.length > 0 && live.length > 0, `both sides hold lines (${before.length} stored, ${live.length} live)`);
  assert.deepEqual(
    [...before, ...live],
    Array.from({ length: n }, (_, i) => `line ${i}`),
  );
  assert.equal(ended, true);
});

test('a follower is subscribed only when the callback asks at the moment of the snapshot', async () => {
  const { logs } = hub();
  const key = newId('deployment');
  logs.append(key, 'system', 'done');
  const { snapshot, unsubscribe } = await logs.snapshot(key, () => undefined);
  assert.equal(unsubscribe, undefined);
  assert.equal(snapshot.pending.length + snapshot.files.length > 0, true);
  for await (const _ of readTail(snapshot)) void _;
});

test('a log is written from begin to finish, and finish ends its followers', async () => {
  const { logs } = hub();
  const key = newId('deployment');
  assert.equal(logs.isWriting(key), false);
  logs.begin(key);
  assert.equal(logs.isWriting(key), true);
  let ended = false;
  const { unsubscribe } = await logs.snapshot(key, () => (entry) => (entry === null ? (ended = true) : undefined));
  logs.finish(key);
  unsubscribe!();
  assert.equal(logs.isWriting(key), false);
  assert.equal(ended, true);
});

test('lines beyond 64 Ki characters are cut', async () => {
  const { logs } = hub();
  const key = newId('app');
  logs.append(key, 'out', 'z'.repeat(MAX_LINE_LENGTH + 10));
  const [entry] = await stored(logs, key);
  assert.equal(entry!.line.length, MAX_LINE_LENGTH);
});

test('each kind of log rotates within its own limits', async () => {
  const { dir, logs } = hub({
    limits: {
      app: { maxFileBytes: 1 * MiB, rotatedFiles: 2 },
      deployment: { maxFileBytes: 1 * MiB, rotatedFiles: 0 },
      deploymentLogsPerApp: 5,
    },
  });
  const app = newId('app');
  const deployment = newId('deployment');
  const line = 'x'.repeat(1000);
  for (let round = 0; round < 10; round++) {
    for (let i = 0; i < 500; i++) {
      logs.append(app, 'out', line);
      logs.append(deployment, 'system', line);
    }
    await flushed(logs, app);
    await flushed(logs, deployment);
  }
  const sizeOf = (key: string) =>
    readdirSync(dir)
      .filter((f) => f.startsWith(key))
      .reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);
  assert.deepEqual(
    readdirSync(dir)
      .filter((f) => f.startsWith(app))
      .sort(),
    [`${app}.ndjson`, `${app}.ndjson.1`, `${app}.ndjson.2`],
  );
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.startsWith(deployment)),
    [`${deployment}.ndjson`],
  );
  assert.ok(sizeOf(app) <= 3 * MiB && sizeOf(app) > 2 * MiB, `app log: ${sizeOf(app)} bytes`);
  assert.ok(sizeOf(deployment) <= 1 * MiB, `deployment log: ${sizeOf(deployment)} bytes`);
  const last = await stored(logs, app, { lines: 1 });
  assert.equal(last.length, 1);
});

test('when lines come faster than the disk takes them, they are dropped and a notice counts them', async () => {
  const { logs } = hub({ maxQueuedChars: 2000 });
  const key = newId('app');
  const seen: string[] = [];
  const unsubscribe = logs.subscribe(key, (e) => e && seen.push(e.line));
  for (let n = 0; n < 1000; n++) logs.append(key, 'out', `line ${n}`);
  await flushed(logs, key);
  const lines = (await stored(logs, key)).map((e) => e.line);
  unsubscribe();
  const notice = lines.find((l) => l.startsWith('slipway dropped'));
  assert.ok(notice, 'a notice takes the place of the dropped lines');
  const dropped = Number(/dropped (\d+) lines/.exec(notice)![1]);
  assert.equal(lines.length - 1 + dropped, 1000, 'kept + dropped = appended');
  assert.match(notice, /the output came faster than its log could be written/);
  assert.deepEqual(seen, lines, 'followers get exactly what is stored');
});

test('remove deletes a log with its rotated files', async () => {
  const { dir, logs } = hub();
  const key = newId('deployment');
  const other = newId('deployment');
  logs.append(key, 'system', 'bye');
  logs.append(other, 'system', 'stays');
  await flushed(logs, key);
  writeFileSync(join(dir, `${key}.ndjson.1`), '');
  await logs.remove([key]);
  assert.equal(existsSync(join(dir, `${key}.ndjson`)), false);
  assert.equal(existsSync(join(dir, `${key}.ndjson.1`)), false);
  await flushed(logs, other);
  assert.match(readFileSync(join(dir, `${other}.ndjson`), 'utf8'), /stays/);
});

test('a log key that could name another path is refused', () => {
  const { logs } = hub();
  assert.throws(() => logs.append('../admin-token', 'out', 'x'), /Invalid log key/);
});
