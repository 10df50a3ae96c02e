/**
 * Quotas through the CLI: an administrator sets an organisation's quotas over the daemon's
 * --default-quota, a member meets each limit reachable without deploying (apps, add-ons,
 * domains, instances, flavour, workers), refused with the quota's name and the current use.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';

let daemon: TestDaemon;
let alice: string;
const project = mkdtempSync(join(tmpdir(), 'slipway-quotas-'));

before(async () => {
  daemon = await startDaemon(['--default-quota', 'apps=2,domains=1,max-flavor=S']);
  const created = await daemon.cli(['user', 'create', 'alice', '--format', 'json']);
  assert.equal(created.code, 0, created.stderr);
  alice = (JSON.parse(created.stdout) as { token: string }).token;
  assert.equal((await daemon.cli(['org', 'create', 'acme'], { token: alice })).code, 0);
});

after(async () => {
  await daemon?.stop();
});

async function as(token: string | undefined, args: string[]) {
  return daemon.cli(args, { cwd: project, ...(token ? { token } : {}) });
}

async function ok(token: string | undefined, args: string[]) {
  const result = await as(token, args);
  assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
  return result;
}

async function refused(token: string | undefined, args: string[], message: RegExp) {
  const result = await as(token, args);
  assert.equal(result.code, 1, `${args.join(' ')} should be refused: ${result.stdout}`);
  assert.match(result.stderr, message);
  return result;
}

const create = (name: string) => ['create', '--type', 'node', name, '--region', 'par', '--org', 'acme', '--alias', name];

test('a member meets the quotas, refused with the quota and the use; an administrator raises and clears them', async () => {
  const shop = (await ok(alice, [...create('shop'), '--format', 'json'])).stdout;
  assert.ok(shop.length > 0);
  await ok(alice, create('blog'));
  const third = await refused(alice, create('wiki'), /organisation acme has 2 of 2 apps \(quota apps\)/);
  assert.match(third.stderr, /slipway org quota set acme --apps N/);

  await ok(alice, ['domain', 'add', 'shop.example.com', '--app', 'shop']);
  await refused(alice, ['domain', 'add', 'blog.example.com', '--app', 'blog'], /organisation acme has 1 of 1 domains \(quota domains\)/);
  await refused(alice, ['scale', '--flavor', 'M', '--app', 'shop'], /may use flavours up to S, not M \(quota max-flavor\)/);
  await ok(alice, ['scale', '--flavor', 'S', '--app', 'shop']);

  // Only an administrator sets quotas, even for the organisation's owner.
  await refused(alice, ['org', 'quota', 'set', 'acme', '--apps', '10'], /Only an administrator/);
  await ok(undefined, ['org', 'quota', 'set', 'acme', '--apps', '3', '--addons', '0', '--instances', '3', '--memory', '3G']);
  await ok(alice, create('wiki'));
  await refused(alice, ['addon', 'create', 'redis', 'cache', '--org', 'acme'], /organisation acme has 0 of 0 add-ons \(quota addons\)/);
  // shop: one S instance (2 GiB); blog and wiki one nano each (512 MiB): 3 GiB, 3 instances.
  await refused(
    alice,
    ['scale', '--instances', '3', '--app', 'blog'],
    /organisation acme has 3 of 3 instances; this would make 5 \(quota instances\)/,
  );

  await ok(undefined, ['org', 'quota', 'set', 'acme', '--workers', '1']);
  await ok(alice, ['env', 'set', 'CC_WORKER_COMMAND', 'node worker.js', '--app', 'blog']);
  await refused(
    alice,
    ['env', 'set', 'CC_WORKER_COMMAND', 'node worker.js', '--app', 'wiki'],
    /organisation acme has 1 of 1 workers \(quota workers\)/,
  );

  const shown = JSON.parse((await ok(alice, ['org', 'quota', 'acme', '--format', 'json'])).stdout);
  assert.deepEqual(shown.usage, {
    apps: 3,
    addons: 0,
    instances: 3,
    memory_bytes: 3 * 1024 ** 3,
    max_flavor: 'S',
    workers: 1,
    runs: 0,
    domains: 1,
    cron_jobs: 0,
    drains: 0,
    drain_buffer_bytes: 0,
    webhooks: 0,
    notify_emails: 0,
    backups: 0,
  });
  assert.equal(shown.limits.apps, 3);
  assert.equal(shown.limits.domains, 1);
  assert.deepEqual(shown.overridden, ['apps', 'addons', 'instances', 'memory_bytes', 'workers']);
  const table = (await ok(alice, ['org', 'quota', 'acme'])).stdout;
  assert.match(table, /^apps +3 +3 +set$/m);
  assert.match(table, /^domains +1 +1 +default$/m);
  assert.match(table, /^memory +3 GiB +3 GiB +set$/m);

  // Clearing puts the daemon's default back: two apps, while acme has three.
  await ok(undefined, ['org', 'quota', 'set', 'acme', '--apps', 'default']);
  const cleared = JSON.parse((await ok(alice, ['org', 'quota', 'acme', '--format', 'json'])).stdout);
  assert.equal(cleared.limits.apps, 2);
  assert.ok(!cleared.overridden.includes('apps'));
  await refused(alice, create('forum'), /organisation acme has 3 of 2 apps \(quota apps\)/);
});
