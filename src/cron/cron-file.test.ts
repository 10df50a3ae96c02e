import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PlanError } from '../core/errors.js';
import { parseCronEntry, parseCronFile, runArgv } from './cron-file.js';

function refusal(text: string): string {
  try {
    parseCronFile(text);
  } catch (error) {
    assert.ok(error instanceof PlanError, `a PlanError, not ${String(error)}`);
    assert.ok(error.hint, 'with a hint');
    return error.message;
  }
  assert.fail('the file was accepted');
}

test('a file of two jobs gives their schedules, commands, lines and names', () => {
  const jobs = parseCronFile('[\n  "*/5 * * * * $ROOT/bin/task --flag",\n\n  "0  3 * * mon-fri   /usr/bin/env node $ROOT/purge.js"\n]\n');
  assert.deepEqual(
    jobs.map(({ name, line, schedule, command }) => ({ name, line, schedule, command })),
    [
      { name: 'cron-1', line: 2, schedule: '*/5 * * * *', command: '$ROOT/bin/task --flag' },
      { name: 'cron-2', line: 4, schedule: '0 3 * * mon-fri', command: '/usr/bin/env node $ROOT/purge.js' },
    ],
  );
  assert.notEqual(jobs[0]!.key, jobs[1]!.key);
});

test('the same job twice gets two keys; the same job in another file keeps its key', () => {
  const twice = parseCronFile('["* * * * * /bin/true", "* * * * * /bin/true"]');
  assert.notEqual(twice[0]!.key, twice[1]!.key);
  const moved = parseCronFile('["0 0 * * * /bin/date", "* * * * * /bin/true"]');
  assert.equal(moved[1]!.key, twice[0]!.key);
});

test('an empty array is no job', () => {
  assert.deepEqual(parseCronFile('[]'), []);
});

test('invalid JSON is refused with its line and column, without quoting the file', () => {
  const message = refusal('[\n  "* * * * * /bin/true",\n  secret-text\n]');
  assert.match(message, /not valid JSON: .* at line 3, column 3/);
  assert.doesNotMatch(message, /secret/);
});

test('a file that is not an array of strings is refused', () => {
  assert.match(refusal('{"jobs": []}'), /not a JSON array/);
  assert.match(refusal('["* * * * * /bin/true", 5]'), /entry 2: it is not a string/);
});

test('each bad entry is refused with its line and reason, never quoted', () => {
  const cases: Array<[string, RegExp]> = [
    ['@reboot /bin/start', /@reboot is not available/],
    ['@daily /bin/backup', /write the five fields/],
    ['61 * * * * /bin/true', /minute field \(1st\) has a value out of its range 0 to 59/],
    ['* 24 * * * /bin/true', /hour field \(2nd\) has a value out of its range 0 to 23/],
    ['* * 0 * * /bin/true', /day of month field \(3rd\)/],
    ['* * * 13 * /bin/true', /month field \(4th\)/],
    ['* * * * 8 /bin/true', /day of week field \(5th\)/],
    ['L * * * * /bin/true', /minute field .* something other than numbers/],
    ['0 0 ? * * /bin/true', /day of month field/],
    ['0 0 * * 5#2 /bin/true', /day of week field/],
    ['*/0 * * * * /bin/true', /step/],
    ['5-1 * * * * /bin/true', /runs backwards/],
    ['0 0 31 2 * /bin/true', /no date matches/],
    ['* * * * * bin/task', /not an absolute path/],
    ['* * * * * ${ROOT}/task', /\$\{ROOT\}, which is not replaced/],
    ['* * * * *', /five schedule fields and a command/],
    ['0 * * * * * /bin/true', /not an absolute path/],
  ];
  for (const [entry, reason] of cases) {
    const message = refusal(`[\n"0 0 * * * /bin/true",\n${JSON.stringify(entry)}\n]`);
    assert.match(message, /clevercloud\/cron\.json, line 3 \(entry 2\): /, entry);
    assert.match(message, reason, entry);
    if (entry.includes('bin/task')) assert.doesNotMatch(message, /bin\/task/);
  }
});

test('month and day names are taken, in any case', () => {
  assert.equal(parseCronEntry('0 9 * JAN,jul Mon-Fri /bin/true').schedule, '0 9 * JAN,jul Mon-Fri');
});

test('$ROOT becomes the release folder; ${ROOT} and $ROOTS do not', () => {
  assert.deepEqual(runArgv('$ROOT/bin/x $ROOT ${ROOT} $ROOTS', '/data/releases/a/d'), [
    '/bin/sh',
    '-c',
    '/data/releases/a/d/bin/x /data/releases/a/d ${ROOT} $ROOTS',
  ]);
});
