import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { runProcess, type ProcessResult } from './run-process.js';
import { RepoStore } from './repo-store.js';
import { GitSshServer, type ReceiverHooks } from './ssh-git-server.js';

/**
 * Everything here goes through the stock `git` and `ssh` clients against the real server on a
 * loopback port, with keys made by ssh-keygen.
 */

type Push = Parameters<ReceiverHooks['onPush']>[0];

const work = await mkdtemp(join(tmpdir(), 'slipway-receiver-test-'));
const home = join(work, 'home'); // an empty HOME: no user git config, no ~/.ssh keys offered
const appId = `app_${randomUUID()}`;
const otherAppId = `app_${randomUUID()}`;
const unknownAppId = `app_${randomUUID()}`;

const repos = new RepoStore(join(work, 'repos'));
const hostKeyPath = join(work, 'host', 'ssh_host_ed25519_key');

const keys = { alice: join(work, 'keys', 'alice'), bob: join(work, 'keys', 'bob'), stranger: join(work, 'keys', 'stranger') };
const owners = new Map<string, string>(); // fingerprint (as ssh-keygen -lf prints it) -> user id
const pushes: Push[] = [];
const authorizeCalls: string[] = [];
const keysOffered = new Map<string, string>(); // user -> algorithm the server reported
let failNextPush: string | null = null;

const hooks: ReceiverHooks = {
  async authenticate(key) {
    const owner = owners.get(key.fingerprint) ?? null;
    if (owner) keysOffered.set(owner, key.algorithm);
    return owner;
  },
  async authorize(userId, app, access) {
    authorizeCalls.push(`${userId} ${access} ${app}`);
    // alice is a member of both apps; bob of none. unknownAppId does not exist at all.
    return userId === 'alice' && (app === appId || app === otherAppId);
  },
  async onPush(push, say) {
    if (failNextPush) {
      const message = failNextPush;
      failNextPush = null;
      throw new Error(message);
    }
    pushes.push(push);
    const id = `dep_${pushes.length}`;
    say(`Deployment ${id} queued for ${push.after}`);
    say(`Follow it: slipway logs --deployment-id ${id}`);
  },
};

let server: GitSshServer;
let port: number;

async function run(argv: string[], cwd?: string, env: NodeJS.ProcessEnv = {}, input?: string): Promise<ProcessResult> {
  return runProcess(argv, { cwd, env: { ...baseEnv(), ...env }, input });
}

/** The lines git printed as `remote: ...` (git pads them with spaces to clear progress output). */
function remoteLines(stderr: string): string[] {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('remote: '))
    .map((line) => line.slice('remote: '.length).trimEnd());
}

function baseEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'Test',
    GIT_AUTHOR_EMAIL: 'test@example.invalid',
    GIT_COMMITTER_NAME: 'Test',
    GIT_COMMITTER_EMAIL: 'test@example.invalid',
  };
}

function sshOptions(key: string, sshPort: number | null = port): string[] {
  return [
    '-i',
    key,
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    'BatchMode=yes',
    '-o',
    'StrictHostKeyChecking=no',
    '-o',
    'UserKnownHostsFile=/dev/null',
    '-o',
    'LogLevel=ERROR',
    ...(sshPort === null ? [] : ['-p', String(sshPort)]),
  ];
}

/**
 * git with GIT_SSH_COMMAND. No `-p` by default: ssh takes the first -p it is given, so one in
 * GIT_SSH_COMMAND would silently override the port of the URL under test.
 */
function gitAs(user: keyof typeof keys, args: string[], cwd?: string, sshPort: number | null = null): Promise<ProcessResult> {
  return run(['git', ...args], cwd, { GIT_SSH_COMMAND: ['ssh', ...sshOptions(keys[user], sshPort)].join(' ') });
}

function sshAs(user: keyof typeof keys, command?: string, input?: string): Promise<ProcessResult> {
  return run(['ssh', ...sshOptions(keys[user]), 'git@127.0.0.1', ...(command === undefined ? [] : [command])], undefined, {}, input);
}

const gitPlusSshUrl = (id: string) => `git+ssh://git@127.0.0.1:${port}/${id}.git`;
const sshUrl = (id: string) => `ssh://git@127.0.0.1:${port}/${id}.git`;

async function newWorkingCopy(name: string): Promise<string> {
  const dir = join(work, 'clients', name);
  await mkdir(dir, { recursive: true });
  await run(['git', 'init', '--quiet', '--initial-branch=master', dir]);
  return dir;
}

async function commitFile(dir: string, file: string, content: string): Promise<string> {
  await writeFile(join(dir, file), content);
  await run(['git', 'add', '--all'], dir);
  const commit = await run(['git', 'commit', '--quiet', '-m', `change ${file}`], dir);
  assert.equal(commit.code, 0, commit.stderr);
  return (await run(['git', 'rev-parse', 'HEAD'], dir)).stdout.trim();
}

before(async () => {
  await mkdir(home, { recursive: true });
  await mkdir(join(work, 'keys'), { recursive: true });
  for (const [user, path] of Object.entries(keys)) {
    const made = await run(['ssh-keygen', '-q', '-t', user === 'bob' ? 'rsa' : 'ed25519', '-N', '', '-C', user, '-f', path]);
    assert.equal(made.code, 0, made.stderr);
    if (user === 'stranger') continue; // a valid key nobody registered
    const listed = await run(['ssh-keygen', '-lf', `${path}.pub`]);
    owners.set(listed.stdout.split(' ')[1]!, user);
  }
  server = new GitSshServer({ host: '127.0.0.1', port: 0, hostKeyPath, repos, hooks, log: () => {} });
  ({ port } = await server.start());
});

after(async () => {
  await server.stop();
  await rm(work, { recursive: true, force: true });
});

beforeEach(() => {
  pushes.length = 0;
  authorizeCalls.length = 0;
});

describe('git push over SSH', () => {
  let dir: string;
  let first: string;

  test('a push to master with the git+ssh:// URL stores the commit, calls onPush and shows its lines', async () => {
    dir = await newWorkingCopy('alice');
    first = await commitFile(dir, 'index.js', 'console.log("v1")\n');
    await run(['git', 'remote', 'add', 'slipway', gitPlusSshUrl(appId)], dir);
    const push = await gitAs('alice', ['push', 'slipway', 'master'], dir);
    assert.equal(push.code, 0, push.stderr);
    assert.deepEqual(pushes, [{ userId: 'alice', appId, before: null, after: first }]);
    assert.deepEqual(remoteLines(push.stderr), [`Deployment dep_1 queued for ${first}`, 'Follow it: slipway logs --deployment-id dep_1']);
    assert.equal(await repos.head(appId), first);
    assert.deepEqual(authorizeCalls, [`alice push ${appId}`]);
  });

  test('pushing the same commit again changes no ref and does not call onPush', async () => {
    const push = await gitAs('alice', ['push', 'slipway', 'master'], dir);
    assert.equal(push.code, 0, push.stderr);
    assert.match(push.stderr, /Everything up-to-date/);
    assert.deepEqual(pushes, []);
  });

  test('the ssh:// URL works too and onPush gets the previous commit as `before`', async () => {
    const second = await commitFile(dir, 'index.js', 'console.log("v2")\n');
    await run(['git', 'remote', 'set-url', 'slipway', sshUrl(appId)], dir);
    const push = await gitAs('alice', ['push', 'slipway', 'master'], dir);
    assert.equal(push.code, 0, push.stderr);
    assert.deepEqual(pushes, [{ userId: 'alice', appId, before: first, after: second }]);
    first = second;
  });

  test('the scp-like form (port from GIT_SSH_COMMAND) works', async () => {
    const third = await commitFile(dir, 'README.md', 'hello\n');
    const push = await gitAs('alice', ['push', `git@127.0.0.1:${appId}.git`, 'master'], dir, port);
    assert.equal(push.code, 0, push.stderr);
    assert.deepEqual(pushes, [{ userId: 'alice', appId, before: first, after: third }]);
    first = third;
  });

  test('a push to another branch is refused with the master message and deploys nothing', async () => {
    await run(['git', 'checkout', '--quiet', '-b', 'feature'], dir);
    await commitFile(dir, 'feature.js', 'x\n');
    const push = await gitAs('alice', ['push', 'slipway', 'feature'], dir);
    assert.notEqual(push.code, 0);
    assert.deepEqual(remoteLines(push.stderr), [
      '',
      'Push refused: only the master branch deploys, and you pushed refs/heads/feature.',
      'To deploy it, push it to master:',
      '    git push <remote> feature:master',
      '(slipway deploy does this for the current HEAD.)',
      '',
    ]);
    assert.match(push.stderr, /pre-receive hook declined/);
    assert.deepEqual(pushes, []);
    assert.equal(await repos.head(appId, 'refs/heads/feature'), null);
    assert.equal(await repos.head(appId), first);
  });

  test('pushing the branch as the message says deploys it', async () => {
    const feature = (await run(['git', 'rev-parse', 'HEAD'], dir)).stdout.trim();
    const push = await gitAs('alice', ['push', 'slipway', 'feature:master'], dir);
    assert.equal(push.code, 0, push.stderr);
    assert.deepEqual(pushes, [{ userId: 'alice', appId, before: first, after: feature }]);
    first = feature;
  });

  test('a tag push is refused, and deleting master is refused', async () => {
    await run(['git', 'tag', 'v1'], dir);
    const tag = await gitAs('alice', ['push', 'slipway', 'v1'], dir);
    assert.notEqual(tag.code, 0);
    assert.match(tag.stderr, /only the master branch deploys, and you pushed refs\/tags\/v1/);
    const deletion = await gitAs('alice', ['push', 'slipway', ':master'], dir);
    assert.notEqual(deletion.code, 0);
    assert.ok(remoteLines(deletion.stderr).includes('Push refused: master cannot be deleted, it holds what is deployed.'), deletion.stderr);
    assert.equal(await repos.head(appId), first);
    assert.deepEqual(pushes, []);
  });

  test('when the deployment cannot be queued the pusher is told and git push fails', async () => {
    const next = await commitFile(dir, 'index.js', 'console.log("v4")\n');
    failNextPush = 'the deployment queue is full';
    const push = await gitAs('alice', ['push', 'slipway', 'HEAD:master'], dir);
    assert.notEqual(push.code, 0, 'git push must not report success when nothing was queued');
    assert.deepEqual(remoteLines(push.stderr), [
      `slipway: commit ${next} is stored, but no deployment could be queued: the deployment queue is full`,
      'slipway: run `slipway deploy` to try again.',
    ]);
    assert.equal(await repos.head(appId), next, 'the commit is kept so a retry needs no re-push');
    first = next;
  });

  test('a push from a shallow clone (as CI makes) is accepted', async () => {
    const shallow = join(work, 'clients', 'shallow');
    const clone = await run(['git', 'clone', '--quiet', '--depth', '1', `file://${dir}`, shallow]);
    assert.equal(clone.code, 0, clone.stderr);
    const head = (await run(['git', 'rev-parse', 'HEAD'], shallow)).stdout.trim();
    const push = await gitAs('alice', ['push', gitPlusSshUrl(otherAppId), 'HEAD:master'], shallow);
    assert.equal(push.code, 0, push.stderr);
    assert.deepEqual(pushes, [{ userId: 'alice', appId: otherAppId, before: null, after: head }]);
  });

  test('a member can clone and fetch', async () => {
    const target = join(work, 'clients', 'alice-clone');
    const clone = await gitAs('alice', ['clone', '--quiet', sshUrl(appId), target]);
    assert.equal(clone.code, 0, clone.stderr);
    assert.equal((await run(['git', 'rev-parse', 'HEAD'], target)).stdout.trim(), first);
    assert.equal(await readFile(join(target, 'feature.js'), 'utf8'), 'x\n');
    const fetch = await gitAs('alice', ['fetch', '--quiet', gitPlusSshUrl(appId), 'master'], target);
    assert.equal(fetch.code, 0, fetch.stderr);
    assert.deepEqual(authorizeCalls, [`alice fetch ${appId}`, `alice fetch ${appId}`]);
  });

  test('git protocol v2 is negotiated (GIT_PROTOCOL passes through SendEnv)', async () => {
    const listing = await run(['git', 'ls-remote', sshUrl(appId)], undefined, {
      GIT_SSH_COMMAND: ['ssh', ...sshOptions(keys.alice, null)].join(' '),
      GIT_TRACE_PACKET: '1',
    });
    assert.equal(listing.code, 0, listing.stderr);
    assert.match(listing.stderr, /< version 2/);
    assert.match(listing.stdout, new RegExp(`^${first}\trefs/heads/master$`, 'm'));
  });

  test('if the post-receive hook cannot report, the push still queues its deployment', async () => {
    // A store whose repositories lack the reporting hook stands in for a hook that failed.
    class StoreWithoutReportHook extends RepoStore {
      override async ensure(id: string): Promise<string> {
        const path = await super.ensure(id);
        await rm(join(path, 'hooks', 'post-receive'));
        return path;
      }
    }
    const degraded = new GitSshServer({
      host: '127.0.0.1',
      port: 0,
      hostKeyPath,
      repos: new StoreWithoutReportHook(repos.reposDir),
      hooks,
      log: () => {},
    });
    const started = await degraded.start();
    try {
      const next = await commitFile(dir, 'index.js', 'console.log("v5")\n');
      const url = `ssh://git@127.0.0.1:${started.port}/${appId}.git`;
      const push = await gitAs('alice', ['push', url, 'HEAD:master'], dir);
      assert.equal(push.code, 0, push.stderr);
      assert.deepEqual(pushes, [{ userId: 'alice', appId, before: first, after: next }]);
      assert.match(push.stderr, /^Deployment dep_1 queued for /m, 'said on plain stderr, after git finished');
      first = next;
    } finally {
      await degraded.stop();
    }
  });
});

describe('refusals', () => {
  test('an unregistered key is refused at authentication', async () => {
    const dir = await newWorkingCopy('stranger');
    await commitFile(dir, 'a.txt', 'a\n');
    const push = await gitAs('stranger', ['push', gitPlusSshUrl(appId), 'master'], dir);
    assert.notEqual(push.code, 0);
    assert.match(push.stderr, /Permission denied \(publickey\)/);
    assert.deepEqual(authorizeCalls, []);
    assert.deepEqual(pushes, []);
  });

  test('only the SSH user git is accepted', async () => {
    const result = await run(['ssh', ...sshOptions(keys.alice), `alice@127.0.0.1`, `git-upload-pack '${appId}.git'`]);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /Permission denied \(publickey\)/);
  });

  test('a non-member gets the same answer as for an app that does not exist', async () => {
    const dir = await newWorkingCopy('bob');
    await commitFile(dir, 'a.txt', 'a\n');
    const existing = await gitAs('bob', ['push', gitPlusSshUrl(appId), 'master'], dir);
    const missing = await gitAs('bob', ['push', gitPlusSshUrl(unknownAppId), 'master'], dir);
    const clone = await gitAs('bob', ['clone', sshUrl(appId), join(work, 'clients', 'bob-clone')]);
    for (const result of [existing, missing, clone]) {
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /does not exist, or you have no access to it/);
    }
    assert.equal(existing.stderr.replaceAll(appId, 'APP'), missing.stderr.replaceAll(unknownAppId, 'APP'));
    assert.deepEqual(pushes, []);
    assert.equal(existsSync(repos.pathFor(unknownAppId)), false, 'no repository is created for a refused request');
    // bob's RSA key (signed with rsa-sha2-*) and alice's ed25519 key both authenticated.
    assert.equal(keysOffered.get('bob'), 'ssh-rsa');
    assert.equal(keysOffered.get('alice'), 'ssh-ed25519');
  });

  test('hostile paths and other commands are refused with a message and exit status 1', async () => {
    const hostile = [
      "git-receive-pack '../etc'",
      "git-receive-pack '/../etc.git'",
      `git-receive-pack '${appId}.git/../../etc'`,
      `git-receive-pack 'app_x; rm -rf /tmp/x.git'`,
      `git-upload-pack '${appId}.git'; id`,
      `git-upload-pack '${appId}.git' extra`,
      `git-upload-archive '${appId}.git'`,
      `git-receive-pack '${appId.toUpperCase()}.git'`,
      'ls -la',
      'sh -c id',
    ];
    for (const command of hostile) {
      const result = await sshAs('alice', command);
      assert.equal(result.code, 1, `${command}: ${result.stderr}`);
      assert.match(result.stderr, /refused: /, command);
      assert.equal(result.stdout, '', command);
    }
    assert.deepEqual(authorizeCalls, [], 'nothing hostile reached authorization');
    const viaGit = await gitAs('alice', ['ls-remote', `ssh://git@127.0.0.1:${port}/../etc.git`]);
    assert.notEqual(viaGit.code, 0);
    assert.match(viaGit.stderr, /Repository path refused/);
  });

  test('a shell is refused, also from a terminal where the pty request is refused first', async () => {
    const shell = await sshAs('alice');
    assert.equal(shell.code, 1);
    assert.match(shell.stderr, /Interactive logins are not available/);
    // `script` gives ssh a real terminal, as when a user types `ssh git@host`.
    const typed = ['ssh', ...sshOptions(keys.alice), 'git@127.0.0.1'].join(' ');
    const fromTerminal = await run(['script', '--quiet', '--return', '--command', typed, '/dev/null']);
    assert.equal(fromTerminal.code, 1, fromTerminal.stdout);
    assert.match(fromTerminal.stdout, /PTY allocation request failed/);
    assert.match(fromTerminal.stdout, /Interactive logins are not available/);
  });

  test('the accepted command forms, with and without quotes or leading slash, reach git', async () => {
    for (const command of [
      `git-upload-pack '/${appId}.git'`,
      `git-upload-pack '${appId}.git'`,
      `git upload-pack '${appId}.git'`,
      `git-upload-pack ${appId}.git`,
      `git-upload-pack /${appId}.git`,
    ]) {
      // A flush packet right after the ref advertisement ends the conversation cleanly.
      const result = await sshAs('alice', command, '0000');
      assert.equal(result.code, 0, `${command}: ${result.stderr}`);
      assert.match(result.stdout, /refs\/heads\/master/, command);
    }
  });
});

describe('RepoStore', () => {
  test('exportCommit writes the commit tree without .git, keeping modes and symlinks', async () => {
    const dir = await newWorkingCopy('export');
    await mkdir(join(dir, 'src'));
    await writeFile(join(dir, 'src', 'server.js'), 'module.exports = 1\n');
    await writeFile(join(dir, 'start.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
    await symlink('src/server.js', join(dir, 'main.js'));
    // Release-tarball attributes must not change what is deployed.
    await writeFile(join(dir, '.gitattributes'), 'tests/ export-ignore\nversion.txt export-subst\n');
    await mkdir(join(dir, 'tests'));
    await writeFile(join(dir, 'tests', 'a.test.js'), 'test\n');
    await writeFile(join(dir, 'version.txt'), '$Format:%H$\n');
    const commit = await commitFile(dir, 'package.json', '{"name":"x"}\n');
    const push = await gitAs('alice', ['push', '--quiet', gitPlusSshUrl(otherAppId), '+master'], dir);
    assert.equal(push.code, 0, push.stderr);

    const dest = join(work, 'export', 'tree');
    await repos.exportCommit(otherAppId, commit, dest);
    assert.equal(existsSync(join(dest, '.git')), false);
    assert.equal(await readFile(join(dest, 'src', 'server.js'), 'utf8'), 'module.exports = 1\n');
    assert.equal(await readFile(join(dest, 'package.json'), 'utf8'), '{"name":"x"}\n');
    assert.equal(await readFile(join(dest, 'tests', 'a.test.js'), 'utf8'), 'test\n');
    assert.equal(await readFile(join(dest, 'version.txt'), 'utf8'), '$Format:%H$\n');
    assert.equal((await stat(join(dest, 'start.sh'))).mode & 0o111, 0o111);
    assert.ok((await lstat(join(dest, 'main.js'))).isSymbolicLink());
    assert.equal(await readlink(join(dest, 'main.js')), 'src/server.js');
  });

  test('exportCommit refuses what is not a full commit id', async () => {
    await assert.rejects(repos.exportCommit(otherAppId, 'HEAD', join(work, 'x')), /Not a full commit id/);
    await assert.rejects(repos.exportCommit(otherAppId, '--output=/tmp/x', join(work, 'x')), /Not a full commit id/);
  });

  test('pathFor refuses anything but an app id; remove deletes the repository', async () => {
    for (const bad of ['../etc', 'app_x; rm -rf', `${appId}/..`, '', `app_${randomUUID()}x`]) {
      assert.throws(() => repos.pathFor(bad), /Not an app id/);
    }
    const id = `app_${randomUUID()}`;
    const path = await repos.ensure(id);
    assert.equal(await repos.head(id), null);
    assert.ok((await stat(join(path, 'hooks', 'pre-receive'))).mode & 0o100);
    await repos.remove(id);
    assert.equal(existsSync(path), false);
  });
});

describe('host key', () => {
  test('is created once with mode 0600 and reused after a restart', async () => {
    assert.equal((await stat(hostKeyPath)).mode & 0o777, 0o600);
    const seen = await run(['ssh-keyscan', '-p', String(port), '-t', 'ed25519', '127.0.0.1']);
    const firstFingerprint = server.hostKeyFingerprint;
    const listed = await run(['ssh-keygen', '-lf', `${hostKeyPath}.pub`]);
    assert.equal(listed.stdout.split(' ')[1], firstFingerprint);
    await server.stop();
    server = new GitSshServer({ host: '127.0.0.1', port, hostKeyPath, repos, hooks, log: () => {} });
    await server.start();
    assert.equal(server.hostKeyFingerprint, firstFingerprint);
    const again = await run(['ssh-keyscan', '-p', String(port), '-t', 'ed25519', '127.0.0.1']);
    assert.equal(again.stdout, seen.stdout);
    assert.match(firstFingerprint ?? '', /^SHA256:[A-Za-z0-9+/]{43}$/);
  });
});
