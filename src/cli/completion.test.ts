import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commands } from './commands/index.js';
import { bashCompletion, completionModel, zshCompletion } from './completion.js';

function script(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'slipway-completion-')), 'completion');
  writeFileSync(path, text);
  return path;
}

/** What real bash offers after `words` (the last one being completed). */
function bashOffers(words: string[]): string[] {
  const file = script(bashCompletion(commands));
  const array = words.map((w) => `'${w}'`).join(' ');
  const run = spawnSync(
    'bash',
    ['-c', `source ${file}; COMP_WORDS=(${array}); COMP_CWORD=${words.length - 1}; _slipway; printf '%s\\n' "\${COMPREPLY[@]}"`],
    { encoding: 'utf8' },
  );
  assert.equal(run.status, 0, run.stderr);
  return run.stdout.split('\n').filter(Boolean);
}

test('bash completes commands, sub-commands, options and their fixed values', () => {
  assert.ok(bashOffers(['slipway', 'de']).includes('deploy'));
  assert.ok(bashOffers(['slipway', 'de']).includes('delete'));
  assert.deepEqual(bashOffers(['slipway', 'addon', 'cr']), ['create']);
  assert.deepEqual(bashOffers(['slipway', 'tokens', '']).sort(), ['create', 'list', 'revoke']);
  assert.ok(bashOffers(['slipway', 'deploy', '--ta']).includes('--tag'));
  assert.deepEqual(bashOffers(['slipway', 'deploy', '--exit-on', '']), ['deploy-start', 'deploy-end', 'never']);
  assert.deepEqual(bashOffers(['slipway', 'deploy', '-a', 'x', '--same-commit-policy', 're']), ['restart', 'rebuild']);
  assert.deepEqual(bashOffers(['slipway', 'env', '--format', '']), ['human', 'json', 'shell']);
  assert.deepEqual(bashOffers(['slipway', 'completion', '']), ['bash', 'zsh']);
  assert.deepEqual(bashOffers(['slipway', 'profile', '--f']), ['--format']);
  // A free value or a file argument: nothing offered, so bash falls back to file names.
  assert.deepEqual(bashOffers(['slipway', 'ssh-keys', 'add', '']), []);
  assert.deepEqual(bashOffers(['slipway', 'env', 'set', 'NAME', '']), []);
});

test('every command and option is in the model', () => {
  const model = completionModel(commands);
  for (const command of commands) {
    const path = command.path.join(' ');
    assert.ok(model.known.includes(path), path);
    for (const name of Object.keys(command.options ?? {}))
      assert.ok(
        model.options.get(path)!.some((o) => o.word === `--${name}`),
        `${path} --${name}`,
      );
  }
});

test('zsh offers the same, with descriptions', (t) => {
  if (spawnSync('zsh', ['--version']).error) {
    t.skip('zsh is not installed here, so the zsh script cannot be run');
    return;
  }
  const file = script(zshCompletion(commands));
  // compdef, _describe, compadd and _files are zsh's completion system; stand-ins print what they were given.
  const offers = (words: string[]) => {
    const run = spawnSync(
      'zsh',
      [
        '-fc',
        `compdef() { :; }
_describe() { local -a list; list=("\${(@P)\${@[-1]}}"); print -rl -- "\${list[@]}"; }
compadd() { local -a list; list=("\${(@P)\${@[-1]}}"); print -rl -- "\${list[@]}"; }
_files() { print -- '<files>'; }
source ${file}
words=(${words.map((w) => `'${w}'`).join(' ')}); CURRENT=${words.length}
_slipway`,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(run.status, 0, run.stderr);
    return run.stdout.split('\n').filter(Boolean);
  };
  assert.ok(offers(['slipway', '']).some((l) => /^deploy:Push the current commit/.test(l)));
  assert.ok(offers(['slipway', '']).some((l) => /^addon:Add-ons/.test(l)));
  assert.deepEqual(
    offers(['slipway', 'tokens', '']).map((l) => l.split(':')[0]),
    ['create', 'list', 'revoke'],
  );
  assert.ok(offers(['slipway', 'deploy', '-']).includes('--tag:Deploy the commit of this local tag (create it first with git tag <tag>)'));
  assert.deepEqual(offers(['slipway', 'deploy', '--exit-on', '']), ['deploy-start', 'deploy-end', 'never']);
  assert.deepEqual(offers(['slipway', 'completion', '']), ['bash', 'zsh']);
  assert.deepEqual(offers(['slipway', 'ssh-keys', 'add', '']), ['<files>']);
  // Sourced in a shell that has not loaded the completion system, it loads it and registers itself.
  const registered = spawnSync('zsh', ['-fc', `source ${file}; print -r -- $_comps[slipway]`], {
    encoding: 'utf8',
    env: { ...process.env, HOME: mkdtempSync(join(tmpdir(), 'slipway-zsh-')) },
  });
  assert.equal(registered.stdout.trim(), '_slipway', registered.stderr);
});
