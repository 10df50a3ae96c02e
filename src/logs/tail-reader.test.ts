import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fstatSync, mkdtempSync, openSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTail, type LogSnapshot, type TailOptions } from './tail-reader.js';

const dir = mkdtempSync(join(tmpdir(), 'slipway-tail-'));
let fileCount = 0;

function entry(n: number, line = `line ${n}`): string {
  const time = new Date(Date.UTC(2024, 4, 1, 12, 0, n)).toISOString();
  return JSON.stringify({ time, stream: 'out', line }) + '\n';
}

/** Files (oldest first) holding these texts, and lines still pending. */
function snapshot(files: string[], pending: string[] = []): LogSnapshot {
  return {
    files: files.map((text) => {
      const path = join(dir, `f${fileCount++}`);
      writeFileSync(path, text);
      return { fd: openSync(path, 'r'), size: Buffer.byteLength(text) };
    }),
    pending,
  };
}

async function read(s: LogSnapshot, options: TailOptions = {}, chunkBytes?: number): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of readTail(s, options, chunkBytes)) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** 25 entries: 8 in the oldest file, 10 in the next, 4 in the current one, 3 pending. */
function layout(make: (n: number) => string = (n) => entry(n)) {
  const all = Array.from({ length: 25 }, (_, n) => make(n));
  return { all, files: [all.slice(0, 8).join(''), all.slice(8, 18).join(''), all.slice(18, 22).join('')], pending: all.slice(22) };
}

test('without a window, the whole log: rotated files, the current one, then pending lines', async () => {
  const { all, files, pending } = layout();
  assert.equal(await read(snapshot(files, pending)), all.join(''));
});

test('the last n lines, whatever the chunk size and wherever files and pending lines meet', async () => {
  const { all, files, pending } = layout();
  for (const chunkBytes of [2, 7, 64, 101, 65_536]) {
    // Every count with large chunks; counts next to each boundary with small ones (slow to read).
    const counts =
      chunkBytes >= 64 ? Array.from({ length: all.length + 3 }, (_, n) => n) : [0, 1, 2, 3, 4, 6, 7, 8, 16, 17, 18, 24, 25, 26];
    for (const n of counts) {
      const expected = n === 0 ? '' : all.slice(-n).join('');
      assert.equal(await read(snapshot(files, pending), { lines: n }, chunkBytes), expected, `last ${n} lines, chunks of ${chunkBytes}`);
    }
  }
});

test('multi-byte characters cut by chunk boundaries come out whole', async () => {
  const texts = ['é', '日本語のログ', 'emoji 🚀🚀', 'ü'.repeat(300), 'mixed ascii and ñ'];
  const { all, files, pending } = layout((n) => entry(n, `${n} ${texts[n % texts.length]}`));
  for (const chunkBytes of [1, 2, 3, 5, 17, 1024]) {
    for (const n of [1, 11, 25]) {
      const got = await read(snapshot(files, pending), { lines: n }, chunkBytes);
      assert.equal(got, all.slice(-n).join(''), `last ${n} lines, chunks of ${chunkBytes}`);
      for (const l of got.trimEnd().split('\n')) assert.doesNotThrow(() => JSON.parse(l));
    }
  }
});

test('a huge last line is found and read whole without holding more than it', async () => {
  const huge = entry(30, 'x'.repeat(900_000));
  const s = () => snapshot([entry(1) + entry(2), entry(3) + huge]);
  assert.equal(await read(s(), { lines: 1 }), huge);
  assert.equal(await read(s(), { lines: 2 }), entry(3) + huge);
  assert.equal(await read(s(), { lines: 3 }, 4096), entry(2) + entry(3) + huge);
});

test('a line longer than any the daemon writes is left out, the lines around it are kept', async () => {
  const monster = entry(5, 'y'.repeat(1_200_000));
  assert.equal(await read(snapshot([entry(1) + monster + entry(6)]), {}, 65_536), entry(1) + entry(6));
});

test('since: lines at or after a time, across files and pending lines, alone or with a count', async () => {
  const { all, files, pending } = layout();
  const at = (n: number) => new Date(Date.UTC(2024, 4, 1, 12, 0, n)).toISOString();
  for (const chunkBytes of [3, 50, 65_536]) {
    for (const from of [0, 5, 8, 17, 18, 21, 22, 24]) {
      assert.equal(
        await read(snapshot(files, pending), { since: at(from) }, chunkBytes),
        all.slice(from).join(''),
        `since ${from}, chunks of ${chunkBytes}`,
      );
    }
    assert.equal(await read(snapshot(files, pending), { since: at(30) }, chunkBytes), '', 'nothing newer');
    assert.equal(await read(snapshot(files, pending), { since: '2020-01-01T00:00:00.000Z' }, chunkBytes), all.join(''));
    assert.equal(await read(snapshot(files, pending), { since: at(10), lines: 4 }, chunkBytes), all.slice(-4).join(''), 'the count binds');
    assert.equal(await read(snapshot(files, pending), { since: at(20), lines: 100 }, chunkBytes), all.slice(20).join(''), 'the time binds');
  }
});

test('damaged lines (cut short by a failed write, or not an entry) are left out', async () => {
  const cut = entry(2).slice(0, 20);
  assert.equal(await read(snapshot([entry(1) + 'not json\n' + entry(3) + cut, entry(4)])), entry(1) + entry(3) + entry(4));
  assert.equal(await read(snapshot([entry(1) + entry(3) + cut]), { lines: 1 }), '', 'the cut line counts but is not sent');
});

test('the files are closed at the end, and when the reader stops early', async () => {
  const whole = snapshot([entry(1), entry(2)]);
  const fds = whole.files.map((f) => f.fd);
  await read(whole);
  for (const fd of fds) assert.throws(() => fstatSync(fd), { code: 'EBADF' });
  const early = snapshot([entry(1).repeat(5000), entry(2)]);
  const earlyFds = early.files.map((f) => f.fd);
  for await (const chunk of readTail(early, {}, 1024)) {
    assert.ok(chunk.length > 0);
    break;
  }
  for (const fd of earlyFds) assert.throws(() => fstatSync(fd), { code: 'EBADF' });
});
