import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NdjsonReader } from './ndjson.js';

test('records split across chunks come out whole, in order, blank lines skipped', () => {
  const reader = new NdjsonReader<{ n: number; line?: string }>();
  assert.deepEqual(reader.push('{"n":1}\n{"n":2,"li'), [{ n: 1 }]);
  assert.deepEqual(reader.push('ne":"a\\nb"}\n\n{"n":'), [{ n: 2, line: 'a\nb' }]);
  assert.deepEqual(reader.push('3}'), []);
  assert.deepEqual(reader.rest(), [{ n: 3 }]);
  assert.deepEqual(reader.rest(), []);
});

test('a record that is not JSON fails loudly rather than being skipped', () => {
  assert.throws(() => new NdjsonReader().push('{"n":\n'), SyntaxError);
});
