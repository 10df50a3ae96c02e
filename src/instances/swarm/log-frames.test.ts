import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LogFrameReader } from './log-frames.js';

function frame(type: number, text: string): Buffer {
  const payload = Buffer.from(text);
  const header = Buffer.alloc(8);
  header[0] = type;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

test('frames split anywhere give whole lines per stream; a partial line waits for its end', () => {
  const lines: string[] = [];
  const reader = new LogFrameReader((stream, line) => lines.push(`${stream}:${line}`));
  const all = Buffer.concat([frame(1, 'one\ntw'), frame(2, 'oops\n'), frame(1, 'o\r\nthree'), frame(1, ' é\n')]);
  for (let i = 0; i < all.length; i += 3) reader.push(all.subarray(i, i + 3));
  assert.deepEqual(lines, ['out:one', 'err:oops', 'out:two', 'out:three é']);
  reader.push(frame(2, 'last words'));
  reader.end();
  assert.deepEqual(lines.at(-1), 'err:last words');
});
