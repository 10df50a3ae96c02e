import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LineSplitter } from './line-splitter.js';

function split(chunks: (string | Buffer)[], max?: number): string[] {
  const lines: string[] = [];
  const s = new LineSplitter((l) => lines.push(l), max);
  for (const c of chunks) s.push(c);
  s.end();
  return lines;
}

test('splits on \\n, \\r\\n and lone \\r', () => {
  assert.deepEqual(split(['a\nb\r\nc\rd\n']), ['a', 'b', 'c', 'd']);
});

test('keeps the last line without newline', () => {
  assert.deepEqual(split(['one\ntw', 'o']), ['one', 'two']);
});

test('a \\r\\n split across chunks counts as one line end', () => {
  assert.deepEqual(split(['a\r', '\nb\n']), ['a', 'b']);
});

test('keeps real blank lines', () => {
  assert.deepEqual(split(['a\n\nb\n']), ['a', '', 'b']);
  assert.deepEqual(split(['a\r\n\r\nb']), ['a', '', 'b']);
});

test('progress redraws with \\r become separate lines', () => {
  assert.deepEqual(split(['10%\r', '50%\r', '100%\n']), ['10%', '50%', '100%']);
});

test('decodes a multi-byte character split across chunks', () => {
  const bytes = Buffer.from('héllo ✓\n');
  assert.deepEqual(split([bytes.subarray(0, 2), bytes.subarray(2, 9), bytes.subarray(9)]), ['héllo ✓']);
});

test('cuts runaway lines at the maximum length', () => {
  assert.deepEqual(split(['abcdefgh', 'ij\n'], 4), ['abcd', 'efgh', 'ij']);
});

test('emits nothing for empty input', () => {
  assert.deepEqual(split([]), []);
});
