import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { shellQuote } from './shell-quote.js';

test('sh reads a quoted word back unchanged: spaces, quotes, $, backslashes, globs, newlines', () => {
  const words = ['a b', "it's", "''", '$HOME `id` $(id)', 'back\\slash', '*?[a]', 'line\nbreak', ''];
  const printed = execFileSync('/bin/sh', ['-c', `printf '%s\\0' ${words.map(shellQuote).join(' ')}`], { encoding: 'utf8' });
  assert.deepEqual(printed.split('\0').slice(0, -1), words);
});
