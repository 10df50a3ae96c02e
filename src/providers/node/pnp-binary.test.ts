import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pnpBinaryOf } from './pnp-binary.js';

test("a simple command's first word is the binary, the rest its arguments as written", () => {
  assert.deepEqual(pnpBinaryOf('micro --listen tcp://0.0.0.0:$PORT handler.js'), {
    name: 'micro',
    rest: ' --listen tcp://0.0.0.0:$PORT handler.js',
  });
  assert.deepEqual(pnpBinaryOf('  next start -p "$PORT" '), { name: 'next', rest: ' start -p "$PORT"' });
  assert.deepEqual(pnpBinaryOf('serve'), { name: 'serve', rest: '' });
  assert.deepEqual(pnpBinaryOf('ts-node.cmd'), { name: 'ts-node.cmd', rest: '' });
});

test('scripts that are not one command naming a binary keep yarn run', () => {
  for (const script of [
    'migrate && serve',
    'serve; echo done',
    'serve | tee log',
    'serve > log',
    'serve $(cat port)',
    'serve `cat port`',
    'PORT=1 serve',
    './start.sh',
    'node server.js',
    'yarn node server.js',
    'exec serve',
    'env A=1 serve',
    '{ serve; }',
    'serve\necho',
    '',
  ]) {
    assert.equal(pnpBinaryOf(script), undefined, script);
  }
});
