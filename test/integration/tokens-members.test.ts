import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDaemon, type TestDaemon } from '../support/daemon.js';

let daemon: TestDaemon;
/** A working administrator token (the first-start one until a test revokes it). */
let admin: string;

before(async () => {
  daemon = await startDaemon();
  admin = daemon.adminToken;
});

/** The administrator token left working once a test revoked the first-start one. */
let adminToken: string | undefined;

after(async () => {
  await daemon?.stop({ token: adminToken });
});

async function createToken(args: string[], token?: string): Promise<{ id: string; secret: string; expires_at: string | null }> {
  const created = await daemon.cli(['tokens', 'create', ...args, '--format', 'json'], { token });
  assert.equal(created.code, 0, created.stderr);
  const data = JSON.parse(created.stdout) as { token: { id: string; expires_at: string | null }; secret: string };
  return { id: data.token.id, secret: data.secret, expires_at: data.token.expires_at };
}

test('tokens create prints a working token once; tokens list shows it without its value', async () => {
  const human = await daemon.cli(['tokens', 'create', '--label', 'laptop']);
  assert.equal(human.code, 0, human.stderr);
  const secret = /^token +(slw_\S+)$/m.exec(human.stdout)?.[1];
  assert.ok(secret, human.stdout);
  assert.match(human.stderr, /shown only once/);
  const who = await daemon.cli(['whoami', '--format', 'json'], { token: secret });
  assert.equal(who.code, 0, who.stderr);
  assert.equal(JSON.parse(who.stdout).token.label, 'laptop');

  const list = await daemon.cli(['tokens', 'list']);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /laptop +full +valid +never/);
  assert.match(list.stdout, /admin token +full +valid/);
  assert.ok(!list.stdout.includes(secret), 'a listing never shows a token');
});

test('a token made with --expires stops working when it expires, saying so', async () => {
  const madeAt = Date.now();
  const { secret, expires_at } = await createToken(['--label', 'short', '--expires', '10s']);
  assert.ok(expires_at && Date.parse(expires_at) > madeAt && Date.parse(expires_at) <= Date.now() + 10_000, String(expires_at));
  const works = await daemon.cli(['org', 'list'], { token: secret });
  assert.equal(works.code, 0, works.stderr);
  // Wait out the lifetime: expiry is checked against the daemon's clock on every request.
  await new Promise((r) => setTimeout(r, Date.parse(expires_at!) - Date.now() + 500));
  const refused = await daemon.cli(['org', 'list'], { token: secret });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, new RegExp(`This API token expired at ${expires_at!.replace(/[.]/g, '\\.')}`));
  assert.match(refused.stderr, /slipway tokens create/);
  const bad = await daemon.cli(['tokens', 'create', '--expires', '1 month']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--expires takes a lifetime such as 30s, 90m/);
});

test('a revoked token is refused at once; the first-start token can be revoked only once another admin token exists', async () => {
  const me = JSON.parse((await daemon.cli(['tokens', 'list', '--format', 'json'])).stdout) as Array<{
    id: string;
    label: string;
    state: string;
  }>;
  const firstStart = me.find((t) => t.label === 'admin token')!;
  // Revoke every other working admin token, so the first-start one is the last.
  for (const t of me.filter((t) => t.id !== firstStart.id && t.state === 'valid'))
    assert.equal((await daemon.cli(['tokens', 'revoke', t.id])).code, 0);
  const refused = await daemon.cli(['tokens', 'revoke', firstStart.id]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /last working administrator token/);
  assert.match(refused.stderr, /Create another one first/);

  const next = await createToken(['--label', 'ops']);
  const revoked = await daemon.cli(['tokens', 'revoke', firstStart.id], { token: next.secret });
  assert.equal(revoked.code, 0, revoked.stderr);
  const old = await daemon.cli(['org', 'list']);
  assert.equal(old.code, 1);
  assert.match(old.stderr, /This API token was revoked at/);

  // Revoking by label, and the token in use: the command says the login is gone.
  const self = await daemon.cli(['tokens', 'revoke', 'ops'], { token: next.secret });
  assert.equal(self.code, 1, 'the last admin token cannot go either');
  const spare = await createToken(['--label', 'spare'], next.secret);
  adminToken = spare.secret;
  const selfRevoked = await daemon.cli(['tokens', 'revoke', 'ops'], { token: next.secret });
  assert.equal(selfRevoked.code, 0, selfRevoked.stderr);
  assert.match(selfRevoked.stderr, /It was the token this command used/);
  const all = JSON.parse((await daemon.cli(['tokens', 'list', '--all', '--format', 'json'], { token: spare.secret })).stdout) as Array<{
    label: string;
    state: string;
    user_name: string;
  }>;
  assert.deepEqual(
    all.filter((t) => ['admin token', 'ops', 'spare'].includes(t.label)).map((t) => [t.label, t.state, t.user_name]),
    [
      ['admin token', 'revoked', 'admin'],
      ['ops', 'revoked', 'admin'],
      ['spare', 'valid', 'admin'],
    ],
  );
  admin = spare.secret;
});

test('org members, add-member and remove-member: owners and administrators only, never the last owner', async () => {
  const userToken = async (name: string) => {
    const created = await daemon.cli(['user', 'create', name, '--format', 'json'], { token: admin });
    assert.equal(created.code, 0, created.stderr);
    return (JSON.parse(created.stdout) as { token: string }).token;
  };
  const alice = await userToken('alice');
  const bob = await userToken('bob');
  const carol = await userToken('carol');
  assert.equal((await daemon.cli(['org', 'create', 'acme'], { token: alice })).code, 0);

  // A user who is not an owner cannot add anyone, even to an organisation they belong to.
  assert.equal((await daemon.cli(['org', 'add-member', 'acme', 'bob'], { token: alice })).code, 0);
  const byMember = await daemon.cli(['org', 'add-member', 'acme', 'carol'], { token: bob });
  assert.equal(byMember.code, 1);
  assert.match(byMember.stderr, /Only the owners of acme or an administrator can change its members/);
  const outsider = await daemon.cli(['org', 'members', 'acme'], { token: carol });
  assert.equal(outsider.code, 1);
  assert.match(outsider.stderr, /No organisation "acme" among yours/);

  const members = await daemon.cli(['org', 'members', 'acme', '--format', 'json'], { token: bob });
  assert.deepEqual(
    JSON.parse(members.stdout).map((m: { name: string; role: string }) => [m.name, m.role]),
    [
      ['alice', 'owner'],
      ['bob', 'member'],
    ],
  );

  // An administrator manages any organisation's members, without belonging to it.
  const byAdmin = await daemon.cli(['org', 'add-member', 'acme', 'carol', '--role', 'owner'], { token: admin });
  assert.equal(byAdmin.code, 0, byAdmin.stderr);
  assert.match(byAdmin.stderr, /carol is an owner of acme/);
  assert.equal((await daemon.cli(['org', 'members', 'acme'], { token: carol })).code, 0);

  const removed = await daemon.cli(['org', 'remove-member', 'acme', 'bob'], { token: carol });
  assert.equal(removed.code, 0, removed.stderr);
  const gone = await daemon.cli(['org', 'list', '--format', 'json'], { token: bob });
  assert.deepEqual(JSON.parse(gone.stdout), []);

  assert.equal((await daemon.cli(['org', 'remove-member', 'acme', 'carol'], { token: alice })).code, 0);
  const lastOwner = await daemon.cli(['org', 'remove-member', 'acme', 'alice'], { token: admin });
  assert.equal(lastOwner.code, 1);
  assert.match(lastOwner.stderr, /alice is the last owner of acme/);
  const demote = await daemon.cli(['org', 'add-member', 'acme', 'alice', '--role', 'member'], { token: alice });
  assert.equal(demote.code, 1);
  assert.match(demote.stderr, /last owner/);
  const badRole = await daemon.cli(['org', 'add-member', 'acme', 'bob', '--role', 'boss'], { token: alice });
  assert.equal(badRole.code, 1);
  assert.match(badRole.stderr, /Field "role" must be one of "member", "owner"/);
  const nobody = await daemon.cli(['org', 'remove-member', 'acme', 'zed'], { token: alice });
  assert.equal(nobody.code, 1);
  assert.match(nobody.stderr, /"zed" is not a member of acme/);
});
