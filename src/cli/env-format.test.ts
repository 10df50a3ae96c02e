import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { formatEnvLine, formatEnvSections, formatShellSections, quoteEnvValue } from './env-format.js';
import { parseEnvFile } from './env-file-parse.js';
import { CliError } from './errors.js';

const TRICKY = [
  '',
  'plain',
  'say "hi"',
  'a\\b',
  'ends with \\',
  'ends with \\\\',
  '\\"',
  '\\\\"quoted\\\\"',
  'tab\there',
  'line one\nline two\n',
  'crlf\r\n',
  "it's",
  '$HOME `id` $(id)',
  '#not a comment',
  ' spaces around ',
  'x=y=z',
  'ünïcødé ✓',
  '"',
  "'",
  '\\',
];

function randomValue(seed: number): string {
  const alphabet = ['"', "'", '\\', '\n', '\t', '\r', '#', '=', ' ', 'a', 'é', '$'];
  let x = seed;
  let s = '';
  const length = seed % 12;
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    s += alphabet[x % alphabet.length];
  }
  return s;
}

test('what slipway env writes, env import reads back exactly', () => {
  const values = [...TRICKY, ...Array.from({ length: 500 }, (_, i) => randomValue(i * 7919 + 13))];
  const env = values.map((value, i) => ({ name: `V${i}`, value }));
  const text = formatEnvSections([{ source: 'application', env }]);
  assert.deepEqual(parseEnvFile(text), { variables: env, skipped: [] });
});

test('values are always double-quoted, with a quote escaped as the reference tool does', () => {
  assert.equal(formatEnvLine({ name: 'A', value: 'hello world' }), 'A="hello world"');
  assert.equal(formatEnvLine({ name: 'A', value: 'say "hi"' }), 'A="say \\"hi\\""');
  assert.equal(formatEnvLine({ name: 'A', value: 'tab\tand\nline' }), 'A="tab\tand\nline"');
  assert.equal(quoteEnvValue('a\\b'), '"a\\b"', 'a backslash alone stays as it is');
  assert.equal(quoteEnvValue('\\"'), '"\\\\\\""', 'backslashes before a quote are doubled, plus one');
  assert.equal(quoteEnvValue('end\\'), '"end\\\\"', 'a trailing backslash is doubled so the quote still closes');
});

test("env import reads the reference tool's files: quotes of both kinds, bare values, comments", () => {
  const text = '# comment\nA=1\nB=bare value with "quotes"\r\nC="multi\nline"\nD=\'single \\\' quote\'\n\nE=\nF="x"   \n';
  assert.deepEqual(parseEnvFile(text).variables, [
    { name: 'A', value: '1' },
    { name: 'B', value: 'bare value with "quotes"' },
    { name: 'C', value: 'multi\nline' },
    { name: 'D', value: "single ' quote" },
    { name: 'E', value: '' },
    { name: 'F', value: 'x' },
  ]);
});

test("env import leaves out the add-on's and linked apps' sections of slipway env", () => {
  const text = formatEnvSections([
    { source: 'application', env: [{ name: 'OWN', value: 'mine' }] },
    {
      source: 'add-on db (postgresql)',
      env: [
        { name: 'POSTGRESQL_ADDON_URI', value: 'postgresql://u:p@h/db' },
        { name: 'TRAP', value: 'x\n# application\ny' },
      ],
    },
    { source: 'linked app api', env: [{ name: 'API_BASE', value: 'http://api' }] },
    { source: 'add-on empty (redis)', env: [] },
  ]);
  assert.equal(
    text,
    '# application\nOWN="mine"\n# add-on db (postgresql): not read by env import\nPOSTGRESQL_ADDON_URI="postgresql://u:p@h/db"\nTRAP="x\n# application\ny"\n# linked app api: not read by env import\nAPI_BASE="http://api"\n',
  );
  assert.deepEqual(parseEnvFile(text), {
    variables: [{ name: 'OWN', value: 'mine' }],
    skipped: [
      { source: 'add-on db (postgresql)', count: 2 },
      { source: 'linked app api', count: 1 },
    ],
  });
  // Variables after the app's own header again are read.
  assert.deepEqual(
    parseEnvFile(`${text}# application\nLATER="1"\n`).variables.map((v) => v.name),
    ['OWN', 'LATER'],
  );
});

test('env import says which line it cannot read and what it expects', () => {
  const refused = (text: string, pattern: RegExp) =>
    assert.throws(
      () => parseEnvFile(text),
      (e: unknown) => e instanceof CliError && pattern.test(e.message) && /NAME="value"|slipway env >/.test(e.hint ?? ''),
      text,
    );
  refused('A=1\nnot a variable\n', /^Line 2 has no "=": "not a variable"\.$/);
  refused('A="open\nstill open', /^The value of A \(line 1\) opens a " that never closes\.$/);
  refused('A="x" trailing\n', /^Line 1 has "trailing" after the closing quote of A\.$/);
  refused("export A='x'\n", /shell syntax/);
});

test('--format shell, sourced by a real shell, gives every value exactly and the winning one for a name set twice', () => {
  const env = TRICKY.map((value, i) => ({ name: `V${i}`, value }));
  const script = formatShellSections([
    { source: 'application', env: [...env, { name: 'SHARED', value: 'own' }] },
    {
      source: 'add-on db (postgresql)',
      env: [
        { name: 'SHARED', value: 'add-on' },
        { name: 'DB', value: 'x' },
      ],
    },
  ]);
  assert.match(script, /^# SHARED: the value set above wins$/m);
  const printed = execFileSync('sh', ['-c', `${script}\nnode -e 'process.stdout.write(JSON.stringify(process.env))'`], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH },
  });
  const seen = JSON.parse(printed) as Record<string, string>;
  for (const { name, value } of env) assert.equal(seen[name], value, name);
  assert.equal(seen.SHARED, 'own');
  assert.equal(seen.DB, 'x');
});
