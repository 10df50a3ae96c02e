/**
 * Private git dependencies (SPEC §5 "a private SSH key can be added so that the build can reach
 * private dependencies"), through the real product: a real daemon, git push over SSH, a real npm
 * build that clones a `git+ssh` dependency from a private git server this test starts on a
 * loopback port (builds use the host network), the app checked over HTTP through the router.
 * CC_SSH_PRIVATE_KEY must serve the build and nothing else: not the log, not `slipway activity`,
 * not the release folder, not the instance's environment.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import {
  EXAMPLES,
  checkoutExample,
  commitAll,
  createApp,
  deploymentLog,
  getThroughRouter,
  pushAndWait,
  registerSshKey,
} from '../support/deploy.js';
import { startPrivateGitServer, type PrivateGitServer } from '../support/private-git-server.js';
import { filesHoldingAny } from '../support/files-holding.js';

let daemon: TestDaemon;
let gitEnv: NodeJS.ProcessEnv;
let gitServer: PrivateGitServer;
/** Lines of the key long enough to be unmistakable if they showed up anywhere. */
let keyLines: string[];

/**
 * Lines every unencrypted ed25519 key shares (the first base64 line encodes the format's fixed
 * header), read from a second key made here: they prove nothing, since the daemon's own SSH
 * host key holds them too.
 */
function linesAnyKeyHas(): Set<string> {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-reference-key-'));
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'key')]);
  return new Set(readFileSync(join(dir, 'key'), 'utf8').split('\n'));
}

before(async () => {
  // The private server lives on a private network (test/support/remote-host.ts): opened to the
  // builds as an operator would open theirs.
  daemon = await startDaemon(['--egress-allow', '10.253.0.0/16']);
  ({ gitEnv } = await registerSshKey(daemon));
  gitServer = await startPrivateGitServer(join(EXAMPLES, 'node-private-git-dep-package', 'git-greeting'));
  const common = linesAnyKeyHas();
  keyLines = gitServer.privateKey.split('\n').filter((line) => line.length >= 16 && !line.startsWith('-----') && !common.has(line));
  assert.ok(keyLines.length >= 3);
});

after(async () => {
  await daemon?.stop();
  await gitServer?.stop();
});

interface Deployed {
  appId: string;
  deploymentId: string;
  state: string;
  log: string[];
}

let appCount = 0;

/** The example with its dependency pointed at this run's git server (the port is dynamic), pushed. */
async function deploy(env: Record<string, string>, scripts: Record<string, string> = {}): Promise<Deployed> {
  const dir = checkoutExample('node-private-git-dep');
  const manifestPath = join(dir, 'package.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
    dependencies: Record<string, string>;
    scripts: Record<string, string>;
  };
  manifest.dependencies['@slipway-test/git-greeting'] = gitServer.dependencyUrl;
  Object.assign(manifest.scripts, scripts);
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  commitAll(dir, 'point the dependency at the test git server');
  const { CC_SSH_PRIVATE_KEY: key, ...others } = env;
  const appId = await createApp(daemon, dir, `private-git-dep-${++appCount}`, { NODE_ENV: 'production', ...others });
  if (key !== undefined) {
    // The way a user sets it from a key file: the value starts with "-", so it follows "--".
    const set = await daemon.cli(['env', 'set', 'CC_SSH_PRIVATE_KEY', '--', key], { cwd: dir });
    assert.equal(set.code, 0, 'env set CC_SSH_PRIVATE_KEY failed');
  }
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  return { appId, deploymentId: result.id, state: result.state, log: await deploymentLog(daemon, appId, result.id) };
}

/**
 * Files of the daemon's data folder holding any of the strings, except the store (which keeps
 * the variable). Of the apps' filesystem images only the app's own: each is a sparse file of its
 * whole budget that grep reads to the last zero, and the others were searched by their own tests.
 */
function dataFilesContaining(appId: string, values: string[]): string[] {
  const image = join(daemon.dataDir, 'disks', `${appId}.img`);
  assert.ok(existsSync(image), `the app's filesystem image ${image} exists`);
  const paths = readdirSync(daemon.dataDir)
    .filter((name) => name !== 'disks')
    .map((name) => join(daemon.dataDir, name));
  return filesHoldingAny([...paths, image], values).filter((path) => !/\.(db|sqlite)(-wal|-shm|-journal)?$/.test(path));
}

async function assertKeyNowhere(deployed: Deployed): Promise<void> {
  const log = deployed.log.join('\n');
  const activity = await daemon.cli(['activity', '--app', deployed.appId]);
  const activityJson = await daemon.cli(['activity', '--app', deployed.appId, '--format', 'json']);
  for (const line of keyLines) {
    assert.ok(!log.includes(line), `the deployment log shows the key:\n${log}`);
    assert.ok(!`${activity.stdout}${activityJson.stdout}`.includes(line), 'slipway activity shows the key');
  }
  assert.deepEqual(
    dataFilesContaining(deployed.appId, keyLines),
    [],
    'a file of the data folder (release, build, cache, logs) holds a line of the key',
  );
  assert.equal(
    existsSync(join(daemon.dataDir, 'apps', deployed.appId, 'cache', 'home', '.ssh', 'slipway-build')),
    false,
    'the key folder is removed after the build',
  );
}

test('with CC_SSH_PRIVATE_KEY the git+ssh dependency resolves, the app uses it, and the instance never sees the key', async () => {
  const eventsBefore = gitServer.events.length;
  const deployed = await deploy({ CC_SSH_PRIVATE_KEY: gitServer.privateKey });
  assert.equal(deployed.state, 'OK', `${deployed.log.join('\n')}\n${gitServer.diagnostics.join('\n')}`);
  assert.ok(
    deployed.log.some((line) => line.startsWith('CC_SSH_PRIVATE_KEY is installed for the build only')),
    deployed.log.join('\n'),
  );
  const events = gitServer.events.slice(eventsBefore);
  assert.ok(
    events.some((e) => e.endsWith(' accepted')),
    `the git server saw the deploy key:\n${events.join('\n')}`,
  );
  assert.ok(
    events.some((e) => e.startsWith('fetch ')),
    `the build fetched the repository:\n${events.join('\n')}`,
  );

  const response = await getThroughRouter(daemon, `${deployed.appId}.localhost`);
  assert.equal(response.status, 200, response.body);
  const facts = JSON.parse(response.body) as Record<string, unknown>;
  assert.equal(facts.gitGreeting, 'hello over ssh from a private repository');
  assert.equal(facts.sshKeyInEnv, false, 'CC_SSH_PRIVATE_KEY is not in the instance environment');
  assert.equal(facts.gitSshCommandInEnv, false, "the build's GIT_SSH_COMMAND is not in the instance environment");
  assert.equal(facts.privateKeyTextInEnv, false, 'no variable of the instance holds key text');
  assert.equal(facts.sshFolderBesideApp, false);
  assert.equal(facts.sshFolderInHome, false);

  const releaseDir = join(daemon.dataDir, 'apps', deployed.appId, 'releases', deployed.deploymentId);
  assert.ok(existsSync(join(releaseDir, 'node_modules', '@slipway-test', 'git-greeting', 'index.js')));
  assert.ok(!readdirSync(releaseDir).includes('.ssh'));
  await assertKeyNowhere(deployed);

  // A restart (no build) starts the same release with the same filtered environment.
  const restarted = await daemon.cli(['restart', '--app', deployed.appId], { timeoutMs: 300_000 });
  assert.equal(restarted.code, 0, `${restarted.stdout}${restarted.stderr}`);
  const again = JSON.parse((await getThroughRouter(daemon, `${deployed.appId}.localhost`)).body) as Record<string, unknown>;
  assert.equal(again.gitGreeting, 'hello over ssh from a private repository');
  assert.equal(again.sshKeyInEnv, false);
  assert.equal(again.privateKeyTextInEnv, false);
});

test('a build script that prints the installed key file shows only [redacted] lines in the log', async () => {
  const deployed = await deploy(
    { CC_SSH_PRIVATE_KEY: gitServer.privateKey },
    // The key's path is wherever GIT_SSH_COMMAND's -i names it.
    {
      postinstall:
        'echo key-file-begins && cat "$(printf %s "$GIT_SSH_COMMAND" | sed -e "s/^ssh -i //" -e "s/ -o.*//" -e "s/\'//g")" && echo key-file-ends',
    },
  );
  assert.equal(deployed.state, 'OK', deployed.log.join('\n'));
  const from = deployed.log.indexOf('key-file-begins');
  const to = deployed.log.indexOf('key-file-ends');
  assert.ok(from >= 0 && to > from, deployed.log.join('\n'));
  const printed = deployed.log.slice(from + 1, to);
  assert.equal(printed.length, gitServer.privateKey.trimEnd().split('\n').length, 'every line of the key file was printed');
  assert.ok(printed.filter((line) => line === '[redacted]').length >= keyLines.length, printed.join('\n'));
  await assertKeyNowhere(deployed);
});

test("without the key the build fails with git's refusal in the log", async () => {
  const deployed = await deploy({});
  assert.equal(deployed.state, 'FAIL', deployed.log.join('\n'));
  const log = deployed.log.join('\n');
  assert.match(log, /Permission denied \(publickey\)/, log);
  assert.match(log, /Could not read from remote repository/, log);
  assert.ok(
    deployed.log.some((line) => line.startsWith('Hint: A dependency is fetched with git over SSH') && line.includes('CC_SSH_PRIVATE_KEY')),
    log,
  );
  assert.ok(
    deployed.log.some((line) => line.startsWith('==> [build] Build failed')),
    log,
  );
  assert.ok(!deployed.log.some((line) => line.startsWith('CC_SSH_PRIVATE_KEY is installed')));
});

test('a key the git server does not accept fails the build with the refusal and a hint, and is not shown either', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-other-key-'));
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'k')]);
  const otherKey = readFileSync(join(dir, 'k'), 'utf8');
  const deployed = await deploy({ CC_SSH_PRIVATE_KEY: otherKey });
  assert.equal(deployed.state, 'FAIL', deployed.log.join('\n'));
  const log = deployed.log.join('\n');
  assert.match(log, /Permission denied \(publickey\)/, log);
  assert.ok(
    deployed.log.some((line) => line.startsWith('Hint: A git server refused CC_SSH_PRIVATE_KEY')),
    log,
  );
  const common = linesAnyKeyHas();
  const otherKeyLines = otherKey.split('\n').filter((l) => l.length >= 16 && !l.startsWith('-----') && !common.has(l));
  for (const line of otherKeyLines) assert.ok(!log.includes(line), 'the deployment log shows the key');
  assert.deepEqual(dataFilesContaining(deployed.appId, otherKeyLines), [], 'a file of the data folder holds a line of the key');
  assert.equal(
    existsSync(join(daemon.dataDir, 'apps', deployed.appId, 'cache', 'home', '.ssh', 'slipway-build')),
    false,
    'removed after a failed build too',
  );
});

test('a value that is not a private key fails the build before any command runs, without showing it', async () => {
  const notAKey = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIThisIsAPublicKeyNotAPrivateOne test@example';
  const deployed = await deploy({ CC_SSH_PRIVATE_KEY: notAKey });
  assert.equal(deployed.state, 'FAIL');
  const log = deployed.log.join('\n');
  assert.match(log, /CC_SSH_PRIVATE_KEY is not a private key/);
  assert.ok(!log.includes('AAAAC3NzaC1lZDI1NTE5AAAAIThisIsAPublicKey'), log);
  assert.ok(!deployed.log.some((line) => line.startsWith('==> [build] npm')), 'no build command ran');
});
