import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { SLIPWAY_BIN } from '../support/cli.js';
import { checkoutExample, createApp, deploymentLog, pushAndWait, registerSshKey } from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';

// Token scopes (read, deploy, full), a token never making one with more power or a longer life,
// and open sessions (a followed log, `slipway run`) ending within seconds of a revocation or of
// their user leaving the organisation.
let daemon: TestDaemon;
let appId: string;

async function createToken(args: string[], token?: string): Promise<{ id: string; secret: string }> {
  const created = await daemon.cli(['tokens', 'create', ...args, '--format', 'json'], { token });
  assert.equal(created.code, 0, created.stderr);
  const data = JSON.parse(created.stdout) as { token: { id: string }; secret: string };
  return { id: data.token.id, secret: data.secret };
}

/** A CLI command left running (a follow, a session); resolves with how it ended and what it printed. */
function background(args: string[], token: string): { ended: Promise<{ code: number | null; output: string; at: number }> } {
  const child = spawn(process.execPath, [SLIPWAY_BIN, ...args], {
    env: {
      ...process.env,
      XDG_CONFIG_HOME: join(daemon.dataDir, 'client-config'),
      SLIPWAY_URL: daemon.apiUrl,
      SLIPWAY_TOKEN: token,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const ended = new Promise<{ code: number | null; output: string; at: number }>((resolve) =>
    child.once('exit', (code) => resolve({ code, output, at: Date.now() })),
  );
  setTimeout(() => child.kill('SIGKILL'), 60_000).unref();
  return { ended };
}

before(async () => {
  daemon = await startDaemon();
  const { gitEnv } = await registerSshKey(daemon);
  const dir = checkoutExample('node-hello');
  appId = await createApp(daemon, dir, 'scoped', { SECRET_THING: 'hush' });
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
});

after(async () => {
  await daemon?.stop();
});

test('a read token reads, but neither variables, nor a restart, nor another token', async () => {
  const { secret } = await createToken(['--label', 'dashboard', '--scope', 'read']);
  const status = await daemon.cli(['status', '--app', appId], { token: secret });
  assert.equal(status.code, 0, status.stderr);
  const env = await daemon.cli(['env', '--app', appId], { token: secret });
  assert.equal(env.code, 1);
  assert.match(env.stderr, /This API token has the scope "read", which does not allow this .*: it needs "full"/);
  assert.doesNotMatch(env.stdout + env.stderr, /hush/);
  const restart = await daemon.cli(['restart', '--app', appId], { token: secret });
  assert.equal(restart.code, 1);
  assert.match(restart.stderr, /it needs "deploy"/);
  const mint = await daemon.cli(['tokens', 'create', '--scope', 'read'], { token: secret });
  assert.equal(mint.code, 1);
  assert.match(mint.stderr, /it needs "deploy"/);
  const list = await daemon.cli(['tokens', 'list'], { token: secret });
  assert.match(list.stdout, /dashboard +read +valid/);
});

test('a deploy token restarts and rolls out, but changes no variable nor makes a token of more power', async () => {
  const { secret } = await createToken(['--label', 'ci', '--scope', 'deploy']);
  const restart = await daemon.cli(['restart', '--app', appId], { token: secret, timeoutMs: 120_000 });
  assert.equal(restart.code, 0, restart.stderr);
  const set = await daemon.cli(['env', 'set', 'OTHER', 'x', '--app', appId], { token: secret });
  assert.equal(set.code, 1);
  assert.match(set.stderr, /scope "deploy"/);
  const env = await daemon.cli(['env', '--app', appId]);
  assert.doesNotMatch(env.stdout, /OTHER/, 'nothing was changed');
  const mint = await daemon.cli(['tokens', 'create', '--scope', 'full'], { token: secret });
  assert.equal(mint.code, 1);
  assert.match(mint.stderr, /cannot make a token of scope "full"/);
});

test('an expiring token cannot make one that outlives it', async () => {
  const { secret } = await createToken(['--label', 'an hour', '--expires', '1h']);
  for (const args of [[], ['--expires', '2h']]) {
    const refused = await daemon.cli(['tokens', 'create', ...args], { token: secret });
    assert.equal(refused.code, 1, `tokens create ${args.join(' ')}`);
    assert.match(refused.stderr, /it cannot make one that outlives it/);
  }
  await createToken(['--expires', '30m'], secret);
});

test('revoking a token ends the log it follows within seconds', async () => {
  const { id, secret } = await createToken(['--label', 'follower', '--scope', 'read']);
  const follow = background(['logs', '--app', appId, '--follow'], secret);
  let ended: { code: number | null; output: string; at: number } | undefined;
  void follow.ended.then((e) => (ended = e));
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(ended, undefined, 'the follow runs before the revocation (positive control)');
  const revokedAt = Date.now();
  assert.equal((await daemon.cli(['tokens', 'revoke', id])).code, 0);
  await waitUntil('the follow to end', () => ended !== undefined, 10_000);
  assert.ok(ended!.at - revokedAt < 5000, `ended ${ended!.at - revokedAt} ms after the revocation`);
});

test('removing a member ends their `slipway run` session within seconds', async () => {
  const created = await daemon.cli(['user', 'create', 'dora', '--format', 'json']);
  assert.equal(created.code, 0, created.stderr);
  const dora = (JSON.parse(created.stdout) as { token: string }).token;
  assert.equal((await daemon.cli(['org', 'add-member', 'default', 'dora'])).code, 0);
  const session = background(['run', '--app', appId, '--', 'sleep', '60'], dora);
  let ended: { code: number | null; output: string; at: number } | undefined;
  void session.ended.then((e) => (ended = e));
  await new Promise((r) => setTimeout(r, 3000));
  assert.equal(ended, undefined, `the session runs before the removal (positive control): ${ended?.output}`);
  const removedAt = Date.now();
  const removed = await daemon.cli(['org', 'remove-member', 'default', 'dora']);
  assert.equal(removed.code, 0, removed.stderr);
  await waitUntil('the session to end', () => ended !== undefined, 10_000);
  assert.ok(ended!.at - removedAt < 5000, `ended ${ended!.at - removedAt} ms after the removal`);
  assert.match(ended!.output, /no longer a member of the application's organisation/);
});
