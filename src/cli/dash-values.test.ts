import { test } from 'node:test';
import assert from 'node:assert/strict';
import { separateDashValues } from './dash-values.js';
import type { OptionSpec } from './command.js';

const options: OptionSpec = {
  app: { type: 'string', short: 'a', description: 'the app' },
  format: { type: 'string', description: 'the format' },
  help: { type: 'boolean', short: 'h', description: 'help' },
};

test('values that start with - go behind --, the command options stay options wherever they are', () => {
  assert.deepEqual(separateDashValues(['JAVA_OPTS', '-Dplay.http.secret.key=abc', '--app', 'shop'], options), [
    '--app',
    'shop',
    '--',
    'JAVA_OPTS',
    '-Dplay.http.secret.key=abc',
  ]);
  assert.deepEqual(separateDashValues(['-a', 'shop', 'FLAGS', '--verbose'], options), ['-a', 'shop', '--', 'FLAGS', '--verbose']);
  assert.deepEqual(separateDashValues(['--app=shop', 'X', '-1'], options), ['--app=shop', '--', 'X', '-1']);
});

test('an explicit -- still ends the options, and a line without values is left as it is', () => {
  assert.deepEqual(separateDashValues(['X', '--', '--app', 'y'], options), ['--', 'X', '--app', 'y']);
  assert.deepEqual(separateDashValues(['--help'], options), ['--help']);
});
