import { test } from 'node:test';
import assert from 'node:assert/strict';
import { commands } from './commands/index.js';
import { main } from './main.js';
import { commandHelp, editDistance, globalHelp, HELP_WIDTH, nearestCommand, topicHelp, topics, wrapUsage } from './help.js';

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => void (out += t), err: (t) => void (err += t), env: {} });
  return { code, out, err };
}

test('every command describes every option, names its arguments and shows an example of itself', () => {
  for (const command of commands) {
    const name = command.path.join(' ');
    for (const [option, definition] of Object.entries(command.options ?? {})) {
      assert.ok(definition.description.length > 10, `${name} --${option} has no real description`);
    }
    if (command.args.max > 0) assert.ok(command.arguments?.length, `${name} takes arguments but names none`);
    assert.ok(command.examples.length > 0, `${name} has no example`);
    assert.ok(
      command.examples.some(
        (e) => e.includes(`slipway ${name}`) || (command.aliases ?? []).some((a) => e.includes(`slipway ${a.join(' ')}`)),
      ),
      `${name}: no example runs it`,
    );
    const help = commandHelp(command, commands);
    for (const option of Object.keys(command.options ?? {}))
      assert.match(help, new RegExp(`--${option}\\b`), `${name} help lacks --${option}`);
    assert.match(help, /Examples:\n {2}/);
  }
});

test('command names and their short options are unique', () => {
  const names = commands.flatMap((c) => [c.path, ...(c.aliases ?? [])].map((p) => p.join(' ')));
  assert.equal(new Set(names).size, names.length);
  for (const command of commands) {
    const shorts = Object.values(command.options ?? {}).flatMap((o) => (o.short ? [o.short] : []));
    assert.equal(new Set([...shorts, 'h', 'F']).size, shorts.length + 2, `${command.path.join(' ')} reuses a short option`);
  }
});

test('global help fits 100 columns and names every command', () => {
  const help = globalHelp(commands);
  for (const line of help.split('\n')) assert.ok(line.length <= HELP_WIDTH, `too wide: ${line}`);
  // A name wider than its column stands on a line of its own, its summary below.
  for (const command of commands) assert.match(help, new RegExp(`\n  ${command.path.join(' ')}[ \n]`), command.path.join(' '));
});

test('option and topic listings fit 100 columns too', () => {
  for (const command of commands) {
    // A usage line is wrapped between groups; only an example may be longer than the width.
    const help = commandHelp(command, commands).split('\nExamples:')[0]!;
    const usageEnd = help.indexOf('\n\n');
    for (const line of help.slice(usageEnd).split('\n')) assert.ok(line.length <= HELP_WIDTH, `${command.path.join(' ')}: ${line}`);
  }
  for (const topic of topics(commands))
    for (const line of topicHelp(topic, commands).split('\n')) assert.ok(line.length <= HELP_WIDTH, line);
});

test('a usage line wraps between bracketed groups only', () => {
  const lines = wrapUsage('Usage: slipway deploy [--app <app> | -a <alias>] [--branch <branch> | --tag <tag>] [--force] [--quiet]', 60);
  assert.deepEqual(lines, [
    'Usage: slipway deploy [--app <app> | -a <alias>]',
    '    [--branch <branch> | --tag <tag>] [--force] [--quiet]',
  ]);
});

test('the nearest command is suggested for a typo, not for something unrelated', () => {
  assert.equal(editDistance('deplyo', 'deploy'), 1);
  assert.equal(nearestCommand(['deplyo'], commands), 'deploy');
  assert.equal(nearestCommand(['adon', 'create'], commands), 'addon create');
  assert.equal(nearestCommand(['applic'], commands), 'applications');
  assert.equal(nearestCommand(['zzzzzz'], commands), undefined);
});

test('--version, -v and version print the package version', async () => {
  for (const argv of [['--version'], ['-v'], ['version']]) {
    const r = await run(argv);
    assert.equal(r.code, 0);
    assert.match(r.out, /^slipway \d+\.\d+\.\d+/);
  }
});

test('help <command>, <command> --help and a topic alone print help on stdout with exit 0', async () => {
  const viaHelp = await run(['help', 'addon', 'create']);
  const viaFlag = await run(['addon', 'create', '--help']);
  assert.equal(viaHelp.code, 0);
  assert.equal(viaHelp.out, viaFlag.out);
  assert.match(viaHelp.out, /--plan <plan>/);
  const topic = await run(['addon']);
  assert.equal(topic.code, 0);
  for (const sub of ['create', 'list', 'env', 'delete', 'providers']) assert.match(topic.out, new RegExp(`addon ${sub} `));
});

test('an unknown command suggests the nearest one; a missing argument is named', async () => {
  const typo = await run(['deplyo']);
  assert.equal(typo.code, 2);
  assert.match(typo.err, /Did you mean `slipway deploy`\?/);
  const sub = await run(['env', 'sett', 'A', 'b']);
  assert.equal(sub.code, 2);
  assert.match(sub.err, /Did you mean `slipway env set`\?/);
  const missing = await run(['env', 'set', 'ONLY_NAME']);
  assert.equal(missing.code, 2);
  assert.match(missing.err, /Missing argument <variable-value>\./);
});
