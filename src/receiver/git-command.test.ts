import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gitServiceArgv, parseGitCommand } from './git-command.js';

const appId = 'app_0f8fad5b-d9cb-469f-a165-70867728950e';

test('the command shapes stock git and older tools send are accepted', () => {
  const accepted: Array<[string, 'receive-pack' | 'upload-pack']> = [
    [`git-receive-pack '/${appId}.git'`, 'receive-pack'],
    [`git-receive-pack '${appId}.git'`, 'receive-pack'],
    [`git receive-pack '${appId}.git'`, 'receive-pack'],
    [`git-receive-pack ${appId}.git`, 'receive-pack'],
    [`git receive-pack /${appId}.git`, 'receive-pack'],
    [`git-upload-pack '/${appId}.git'`, 'upload-pack'],
    [`git upload-pack ${appId}.git`, 'upload-pack'],
  ];
  for (const [command, service] of accepted) {
    assert.deepEqual(parseGitCommand(command), { ok: true, service, appId }, command);
  }
});

test('hostile or unexpected commands are refused with a reason', () => {
  const refused = [
    '',
    'ls',
    'sh -c id',
    "git-receive-pack '../etc'",
    "git-receive-pack '/../etc.git'",
    "git-receive-pack '/etc/passwd'",
    `git-receive-pack '${appId}.git/../../etc'`,
    `git-receive-pack '../${appId}.git'`,
    `git-receive-pack '//${appId}.git'`,
    "git-receive-pack 'app_x; rm -rf /'",
    `git-receive-pack '${appId}.git'; rm -rf /`,
    `git-receive-pack '${appId}.git' '${appId}.git'`,
    `git-receive-pack "${appId}.git"`,
    `git-receive-pack '${appId}'`,
    `git-receive-pack '${appId.toUpperCase()}.git'`,
    `git-receive-pack '${appId}.git\n'`,
    `git-upload-archive '${appId}.git'`,
    `git-receive-pack --help '${appId}.git'`,
    `git-receive-pack '--upload-pack=touch ${appId}.git'`,
    `git -c core.hooksPath=/tmp receive-pack '${appId}.git'`,
    `/usr/bin/git-receive-pack '${appId}.git'`,
  ];
  for (const command of refused) {
    const parsed = parseGitCommand(command);
    assert.equal(parsed.ok, false, JSON.stringify(command));
    if (!parsed.ok) assert.match(parsed.reason, /refused: /);
  }
});

test('the git process is an argv array with the repository as its own argument', () => {
  assert.deepEqual(gitServiceArgv('receive-pack', '/srv/repos/x.git'), ['git', 'receive-pack', '/srv/repos/x.git']);
});
