import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PhaseError } from '../core/phase-error.js';
import { BUILD_SSH_DIR, explainGitSshRefusal, gitSshCommand, installBuildSshKey, normalizePrivateKey } from './build-ssh-key.js';
import { withoutBuildOnlyVariables } from '../core/injected-env.js';

function realKey(): string {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-key-unit-'));
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'k')]);
  return readFileSync(join(dir, 'k'), 'utf8');
}

test('the key variable is kept out of the environment handed to processes, other variables stay', () => {
  assert.deepEqual(withoutBuildOnlyVariables({ CC_SSH_PRIVATE_KEY: 'k', NPM_TOKEN: 't', A: 'b' }), { NPM_TOKEN: 't', A: 'b' });
});

test('keys are normalised: CRLF, missing final newline and literal \\n all give a key ssh reads', () => {
  const key = realKey();
  assert.equal(normalizePrivateKey(key.trimEnd()), key);
  assert.equal(normalizePrivateKey(key.replace(/\n/g, '\r\n')), key);
  assert.equal(normalizePrivateKey(key.trimEnd().split('\n').join('\\n')), key);
  // ssh-keygen -y proves ssh accepts the normalised text as a private key.
  const dir = mkdtempSync(join(tmpdir(), 'slipway-key-unit-'));
  const path = join(dir, 'normalised');
  execFileSync('sh', ['-c', 'umask 077 && cat > "$0"', path], { input: normalizePrivateKey(key.trimEnd().split('\n').join('\\n')) });
  assert.equal(spawnSync('ssh-keygen', ['-y', '-f', path]).status, 0);
});

test('a value that is not a private key is refused without being shown', () => {
  assert.throws(
    () => normalizePrivateKey('ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPublicKeyNotPrivate me@host'),
    (error: Error) => {
      assert.match(error.message, /CC_SSH_PRIVATE_KEY is not a private key/);
      assert.doesNotMatch(error.message, /AAAAC3/);
      return true;
    },
  );
});

test('GIT_SSH_COMMAND names the key and the known_hosts, quoted for the shell git runs it with', () => {
  assert.equal(
    gitSshCommand("/data/it's home/id", '/data/h/known_hosts'),
    "ssh -i '/data/it'\\''s home/id' -o IdentitiesOnly=yes -o IdentityAgent=none -o BatchMode=yes -o StrictHostKeyChecking=accept-new -o 'UserKnownHostsFile=/data/h/known_hosts'",
  );
  // The shell turns it back into the exact words.
  const words = execFileSync('sh', ['-c', `printf '%s\\n' ${gitSshCommand("/a b/it's", '/k h')}`], { encoding: 'utf8' })
    .trim()
    .split('\n');
  assert.deepEqual(words.slice(0, 3), ['ssh', '-i', "/a b/it's"]);
  assert.equal(words.at(-1), 'UserKnownHostsFile=/k h');
});

test('the key is written 0600 for the build user and removed afterwards; a leftover from a killed build goes too', {
  skip: process.getuid?.() !== 0 && 'needs root (gives the key to another user)',
}, async () => {
  const home = mkdtempSync(join(tmpdir(), 'slipway-home-unit-'));
  const lines: string[] = [];
  const key = realKey();
  const installed = await installBuildSshKey({
    appVars: { CC_SSH_PRIVATE_KEY: key },
    home,
    user: { uid: 4242, gid: 4343 },
    log: (l) => lines.push(l),
  });
  const keyPath = join(home, BUILD_SSH_DIR, 'id');
  assert.equal(readFileSync(keyPath, 'utf8'), key);
  const stat = statSync(keyPath);
  assert.equal(stat.mode & 0o777, 0o600);
  assert.equal(stat.uid, 4242);
  assert.equal(stat.gid, 4343);
  assert.equal(statSync(join(home, BUILD_SSH_DIR)).mode & 0o777, 0o700);
  assert.match(installed.env.GIT_SSH_COMMAND!, new RegExp(`-i '${keyPath}'`));
  assert.ok(!lines.join('\n').includes(key.split('\n')[1]!), 'the key is not logged');

  // Without a key, a folder left by a crashed build is removed and nothing is added.
  const none = await installBuildSshKey({ appVars: {}, home, user: { uid: 4242, gid: 4343 }, log: () => undefined });
  assert.deepEqual(none.env, {});
  assert.equal(existsSync(join(home, BUILD_SSH_DIR)), false);

  const again = await installBuildSshKey({
    appVars: { CC_SSH_PRIVATE_KEY: key },
    home,
    user: { uid: 4242, gid: 4343 },
    log: () => undefined,
  });
  await again.remove();
  assert.equal(existsSync(join(home, BUILD_SSH_DIR)), false);
});

test('a publickey refusal in the build output gets a hint that depends on whether a key was installed', () => {
  const output = ['npm error git@127.0.0.1: Permission denied (publickey).', 'npm error fatal: Could not read from remote repository.'];
  assert.match(explainGitSshRefusal(output, false)!, /set CC_SSH_PRIVATE_KEY to a private key the git server accepts/);
  assert.match(explainGitSshRefusal(output, true)!, /A git server refused CC_SSH_PRIVATE_KEY/);
  assert.equal(explainGitSshRefusal(['npm error 404 Not Found'], false), null);
});

test("a link or a folder at the key's names never sends the key elsewhere", async () => {
  const owner = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
  const key = realKey();
  const elsewhere = mkdtempSync(join(tmpdir(), 'slipway-elsewhere-'));

  // A link where the key's folder goes (left by an earlier build) is removed, not followed.
  const home = mkdtempSync(join(tmpdir(), 'slipway-home-unit-'));
  mkdirSync(join(home, '.ssh'));
  symlinkSync(elsewhere, join(home, BUILD_SSH_DIR));
  const installed = await installBuildSshKey({ appVars: { CC_SSH_PRIVATE_KEY: key }, home, user: owner, log: () => undefined });
  assert.ok(lstatSync(join(home, BUILD_SSH_DIR)).isDirectory());
  assert.equal(readFileSync(join(home, BUILD_SSH_DIR, 'id'), 'utf8'), key);
  assert.deepEqual(readdirSync(elsewhere), [], 'nothing written where the link pointed');
  await installed.remove();
  assert.equal(existsSync(join(home, BUILD_SSH_DIR)), false);

  // A link at .ssh leading out of the home fails the build by name, with nothing written.
  const linked = mkdtempSync(join(tmpdir(), 'slipway-home-unit-'));
  symlinkSync(elsewhere, join(linked, '.ssh'));
  await assert.rejects(
    installBuildSshKey({ appVars: { CC_SSH_PRIVATE_KEY: key }, home: linked, user: owner, log: () => undefined }),
    (error: Error) => {
      assert.ok(error instanceof PhaseError && error.phase === 'build');
      assert.match(
        error.message,
        /Could not install CC_SSH_PRIVATE_KEY for the build: \.ssh \(on the way to \.ssh\/slipway-build\) is a symbolic link to an absolute path/,
      );
      assert.ok(!error.message.includes(elsewhere));
      return true;
    },
  );
  assert.deepEqual(readdirSync(elsewhere), []);
});
