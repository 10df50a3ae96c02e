import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../store/store.js';
import { DEFAULT_QUOTAS, effectiveLimits, parseDefaultQuotas, parseQuotaValue } from './limits.js';
import { QuotaExceededError, refusalMessage } from './refusal.js';
import { OrgsPerUserExceededError } from './refusal.js';
import { Quotas } from './quotas.js';

const GiB = 1024 ** 3;

function fresh(defaults = 'apps=2,addons=1,instances=4,memory=2G,max-flavor=XS,runs=1,domains=1') {
  const store = Store.open(join(mkdtempSync(join(tmpdir(), 'slipway-quotas-')), 'slipway.db'));
  const org = store.orgs.create('acme');
  return { store, org, quotas: new Quotas(store, parseDefaultQuotas(defaults)) };
}

function refused(work: () => void, message: string, hint = /slipway org quota set acme --/): void {
  assert.throws(work, (error: unknown) => {
    assert.ok(error instanceof QuotaExceededError);
    assert.equal(error.status, 403);
    assert.equal(error.code, 'quota_exceeded');
    assert.equal(error.message, message);
    assert.match(error.hint ?? '', hint);
    return true;
  });
}

test('--default-quota names some quotas; the others keep the built-in defaults', () => {
  const limits = parseDefaultQuotas('apps=20, memory=64G,max-flavor=m,max_flavor=S');
  assert.deepEqual(limits, { ...DEFAULT_QUOTAS, apps: 20, memory_bytes: 64 * GiB, max_flavor: 'S' });
  assert.deepEqual(parseDefaultQuotas(undefined), DEFAULT_QUOTAS);
  assert.throws(() => parseDefaultQuotas('apps'), /not <quota>=<value>/);
  assert.throws(() => parseDefaultQuotas('cpus=3'), /not <quota>=<value>/);
  assert.throws(() => parseDefaultQuotas('apps=-1'), /whole number from 0/);
  assert.throws(() => parseDefaultQuotas('max-flavor=huge'), /Unknown flavour/);
  assert.equal(parseQuotaValue('runs', 0), 0);
  assert.equal(parseQuotaValue('memory_bytes', '512M'), 512 * 1024 * 1024);
});

test("an organisation's override wins; null falls back to the default", () => {
  const limits = effectiveLimits(DEFAULT_QUOTAS, { apps: 3, addons: null, max_flavor: 'pico' });
  assert.equal(limits.apps, 3);
  assert.equal(limits.addons, DEFAULT_QUOTAS.addons);
  assert.equal(limits.max_flavor, 'pico');
});

test('the refusal names the organisation, the use, the limit, the quota and the command raising it', () => {
  assert.deepEqual(refusalMessage({ org: 'acme', quota: 'apps', used: 5, limit: 5 }), {
    message: 'organisation acme has 5 of 5 apps (quota apps).',
    hint: 'Ask an administrator to raise it: slipway org quota set acme --apps N',
  });
  assert.equal(
    refusalMessage({ org: 'acme', quota: 'memory_bytes', used: GiB, limit: 2 * GiB, after: 3 * GiB }).message,
    'organisation acme has 1 GiB of 2 GiB instance memory; this would make 3 GiB (quota memory).',
  );
  assert.equal(
    refusalMessage({ org: 'acme', quota: 'max_flavor', used: 'M', limit: 'XS' }).message,
    'organisation acme may use flavours up to XS, not M (quota max-flavor).',
  );
});

test('apps, add-ons and domains are refused past their quota, and allowed again once raised', () => {
  const { store, org, quotas } = fresh();
  quotas.checkNewApp(org);
  const a = store.apps.create({ orgId: org.id, name: 'a', type: 'node', region: 'par' });
  quotas.checkNewApp(org);
  store.apps.create({ orgId: org.id, name: 'b', type: 'node', region: 'par' });
  refused(() => quotas.checkNewApp(org), 'organisation acme has 2 of 2 apps (quota apps).');
  store.orgQuotas.set(org.id, { apps: 3 });
  quotas.checkNewApp(org);

  quotas.checkNewAddon(org);
  store.addons.create({ orgId: org.id, provider: 'redis', name: 'cache' });
  refused(() => quotas.checkNewAddon(org), 'organisation acme has 1 of 1 add-ons (quota addons).');

  quotas.checkNewDomain(org);
  store.domains.add(a.id, 'www.example.com');
  refused(() => quotas.checkNewDomain(org), 'organisation acme has 1 of 1 domains (quota domains).');
  store.orgQuotas.set(org.id, { domains: null, apps: null });
  assert.deepEqual(store.orgQuotas.of(org.id).apps, null);
  refused(() => quotas.checkNewApp(org), 'organisation acme has 2 of 2 apps (quota apps).');
  assert.deepEqual(quotas.usageOf(org.id), {
    apps: 2,
    addons: 1,
    instances: 2,
    memory_bytes: GiB,
    max_flavor: 'nano',
    workers: 0,
    runs: 0,
    domains: 1,
    cron_jobs: 0,
    drains: 0,
    drain_buffer_bytes: 0,
    webhooks: 0,
    notify_emails: 0,
    backups: 0,
  });
  store.close();
});

test('scaling counts the organisation total of instances and memory, and the biggest flavour', () => {
  const { store, org, quotas } = fresh();
  const a = store.apps.create({ orgId: org.id, name: 'a', type: 'node', region: 'par' });
  store.apps.create({ orgId: org.id, name: 'b', type: 'node', region: 'par' });
  // Two nano instances (512 MiB each) are in use: 1 GiB of 2 GiB, 2 of 4 instances.
  quotas.checkScale(org, a, { instances: 3 });
  refused(
    () => quotas.checkScale(org, a, { instances: 4 }),
    'organisation acme has 2 of 4 instances; this would make 5 (quota instances).',
  );
  refused(() => quotas.checkScale(org, a, { flavor: 'S' }), 'organisation acme may use flavours up to XS, not S (quota max-flavor).');
  refused(
    () => quotas.checkScale(org, a, { flavor: 'XS', instances: 2 }),
    'organisation acme has 1 GiB of 2 GiB instance memory; this would make 2.5 GiB (quota memory).',
  );
  quotas.checkScale(org, a, { flavor: 'XS' });
  // Shrinking is never refused, even over a quota lowered since.
  store.orgQuotas.set(org.id, { instances: 1, memory_bytes: 0 });
  quotas.checkScale(org, a, { instances: 1, flavor: 'pico' });
  store.close();
});

test('an autoscaling range counts at its maximum count and flavour', () => {
  const { store, org, quotas } = fresh('apps=2,instances=6,memory=3G,max-flavor=XS');
  const a = store.apps.create({ orgId: org.id, name: 'a', type: 'node', region: 'par' });
  store.apps.setScaling(a.id, { minInstances: 1, maxInstances: 4, minFlavor: 'pico', maxFlavor: 'nano' }, { instances: 1, flavor: 'pico' });
  const use = quotas.usageOf(org.id);
  assert.equal(use.instances, 4);
  assert.equal(use.memory_bytes, 2 * GiB);
  assert.equal(use.max_flavor, 'nano');
  const ranged = store.apps.byId(a.id)!;
  // A maximum of 7 is over the 6 instances, 5 nano ones over the 3 GiB, a maximum of S over the flavour.
  refused(
    () => quotas.checkScale(org, ranged, { instances: 7 }),
    'organisation acme has 4 of 6 instances; this would make 7 (quota instances).',
  );
  refused(
    () => quotas.checkScale(org, ranged, { instances: 5, flavor: 'XS' }),
    'organisation acme has 2 GiB of 3 GiB instance memory; this would make 5 GiB (quota memory).',
  );
  quotas.checkScale(org, ranged, { instances: 6 });
  store.close();
});

test('one-off runs count while open, each released once', () => {
  const { org, quotas, store } = fresh();
  const end = quotas.startRun(org);
  refused(() => quotas.startRun(org), 'organisation acme has 1 of 1 one-off runs (quota runs).');
  end();
  end();
  assert.equal(quotas.usageOf(org.id).runs, 0);
  quotas.startRun(org)();
  store.close();
});

test('workers count per instance: setting a worker variable and scaling up are both checked', () => {
  const { store, org, quotas } = fresh('workers=3');
  const a = store.apps.create({ orgId: org.id, name: 'a', type: 'node', region: 'par' });
  quotas.checkEnv(org, a, { CC_WORKER_COMMAND: 'node worker.js', CC_WORKER_COMMAND_1: 'node mail.js', CC_WORKER_COMMAND_2: ' ' });
  store.env.set(a.id, 'CC_WORKER_COMMAND', 'node worker.js');
  store.env.set(a.id, 'CC_WORKER_COMMAND_1', 'node mail.js');
  assert.equal(quotas.usageOf(org.id).workers, 2);
  refused(
    () => quotas.checkEnv(org, a, { CC_WORKER_COMMAND: 'a', CC_WORKER_COMMAND_1: 'b', CC_WORKER_COMMAND_7: 'c', CC_WORKER_COMMAND_8: 'd' }),
    'organisation acme has 2 of 3 workers; this would make 4 (quota workers).',
  );
  refused(() => quotas.checkScale(org, a, { instances: 2 }), 'organisation acme has 2 of 3 workers; this would make 4 (quota workers).');
  // Removing workers, or a variable that is not one, is never refused.
  quotas.checkEnv(org, a, { CC_WORKER_COMMAND: 'node worker.js', PORT_NAME: 'x' });
  store.close();
});

test('worker instances of a range count as instances at their maximum, and the refusal says which', () => {
  const { store, org, quotas } = fresh('apps=2,instances=5,memory=4G,max-flavor=XS,workers=4');
  const a = store.apps.create({ orgId: org.id, name: 'a', type: 'node', region: 'par' });
  store.env.set(a.id, 'CC_WORKER_COMMAND', 'node worker.js');
  // Beside each instance: 1 instance, 1 worker. With a range of 1 to 3 worker instances: 4 instances, 3 workers.
  quotas.checkScale(org, a, { workers: 3 });
  store.apps.setWorkerRange(a.id, { min: 1, max: 3, count: 1 });
  const ranged = store.apps.byId(a.id)!;
  const use = quotas.usageOf(org.id);
  assert.deepEqual([use.instances, use.memory_bytes, use.workers], [4, 2 * GiB, 3]);
  refused(
    () => quotas.checkScale(org, ranged, { instances: 3 }),
    "organisation acme has 4 of 5 instances; this would make 6, with this app's 3 instances and 3 worker instances at most (quota instances).",
  );
  refused(
    () => quotas.checkScale(org, ranged, { workers: 5 }),
    "organisation acme has 4 of 5 instances; this would make 6, with this app's 1 instance and 5 worker instances at most (quota instances).",
  );
  quotas.checkScale(org, ranged, { instances: 2 });
  // Back beside each instance: the worker instances no longer count.
  quotas.checkScale(org, ranged, { workers: null, instances: 4 });
  store.close();
});

const MiB = 1024 * 1024;

test('drains, their buffers, webhooks, e-mail notifications and manual backups are counted per organisation', () => {
  const store = Store.open(join(mkdtempSync(join(tmpdir(), 'slipway-quotas-')), 'slipway.db'));
  const org = store.orgs.create('acme');
  const other = store.orgs.create('other');
  const limits = parseDefaultQuotas('drains=3,drain-buffer=40M,webhooks=1,notify-emails=1,backups=1');
  const quotas = new Quotas(store, limits, { drainBufferBytes: 16 * MiB });
  const a = store.apps.create({ orgId: org.id, name: 'a', type: 'node', region: 'par' });
  const b = store.apps.create({ orgId: other.id, name: 'b', type: 'node', region: 'par' });
  const drain = { type: 'HTTP', url: 'https://logs.example.com/', username: null, password: null, with_access_logs: 0 as const };

  quotas.checkNewDrain(org);
  store.drains.add({ app_id: a.id, ...drain });
  quotas.checkNewDrain(org);
  store.drains.add({ app_id: a.id, ...drain });
  // The third drain is within the drains quota but its buffer is not within the budget.
  refused(
    () => quotas.checkNewDrain(org),
    'organisation acme has 32 MiB of 40 MiB drain buffers; this would make 48 MiB (quota drain-buffer).',
    /slipway org quota set acme --drain-buffer <size>/,
  );
  store.orgQuotas.set(org.id, { drain_buffer_bytes: 64 * MiB, drains: 2 });
  refused(() => quotas.checkNewDrain(org), 'organisation acme has 2 of 2 drains (quota drains).');
  // Another organisation's use is its own.
  quotas.checkNewDrain(other);
  store.drains.add({ app_id: b.id, ...drain });

  quotas.checkNewWebhook(org);
  store.webhooks.add({ appId: a.id, name: 'ci', url: 'https://hooks.example.com/', format: 'raw', events: [], secret: 's' });
  refused(() => quotas.checkNewWebhook(org), 'organisation acme has 1 of 1 webhooks (quota webhooks).');
  quotas.checkNewNotifyEmail(org);
  store.notifyEmails.add({ appId: a.id, name: 'ops', targets: [], events: [] });
  refused(() => quotas.checkNewNotifyEmail(org), 'organisation acme has 1 of 1 e-mail notifications (quota notify-emails).');

  const addon = store.addons.create({ orgId: org.id, provider: 'redis', name: 'cache' });
  const backup = (id: string, kind: 'manual' | 'scheduled') =>
    store.addonBackups.insert({
      id,
      addon_id: addon.id,
      kind,
      object_key: `redis/${addon.id}/${id}.rdb`,
      restore_point: null,
      created_at: new Date().toISOString(),
      finished_at: new Date().toISOString(),
      size_bytes: 1,
      counts_json: '{}',
    });
  // Scheduled backups are the platform's own: only manual ones count.
  backup('backup_s', 'scheduled');
  quotas.checkNewBackup(org);
  backup('backup_m', 'manual');
  refused(() => quotas.checkNewBackup(org), 'organisation acme has 1 of 1 manual backups (quota backups).');
  const use = quotas.usageOf(org.id);
  assert.deepEqual([use.drains, use.drain_buffer_bytes, use.webhooks, use.notify_emails, use.backups], [2, 32 * MiB, 1, 1, 1]);
  store.close();
});

test("cron jobs count the serving releases' jobs; a new release is checked against the others'", () => {
  const { store, org } = fresh();
  const a = store.apps.create({ orgId: org.id, name: 'a', type: 'node', region: 'par' });
  const b = store.apps.create({ orgId: org.id, name: 'b', type: 'node', region: 'par' });
  const serving = new Map([[a.id, 3]]);
  const quotas = new Quotas(store, parseDefaultQuotas('cron-jobs=4'), { cronJobsOfApp: (id) => serving.get(id) ?? 0 });
  // a's next release replaces its own three jobs: four is fine, five is not.
  quotas.checkCronJobs(org, a, 4);
  refused(() => quotas.checkCronJobs(org, a, 5), 'organisation acme has 3 of 4 cron jobs; this would make 5 (quota cron-jobs).');
  quotas.checkCronJobs(org, b, 1);
  refused(() => quotas.checkCronJobs(org, b, 2), 'organisation acme has 3 of 4 cron jobs; this would make 5 (quota cron-jobs).');
  // Fewer jobs than now is never refused.
  store.orgQuotas.set(org.id, { cron_jobs: 0 });
  quotas.checkCronJobs(org, a, 2);
  store.close();
});

test('a user owns at most --orgs-per-user organisations; administrators are not bound', () => {
  const { store } = fresh();
  const quotas = new Quotas(store, DEFAULT_QUOTAS, { orgsPerUser: 2 });
  const alice = store.users.create('alice');
  const admin = store.users.create('root', true);
  for (const name of ['one', 'two']) {
    quotas.checkNewOrg(alice);
    store.orgs.addMember(store.orgs.create(name).id, alice.id, 'owner');
  }
  // Being a member (not an owner) of another organisation does not count.
  store.orgs.addMember(store.orgs.create('theirs').id, alice.id, 'member');
  assert.throws(
    () => quotas.checkNewOrg(alice),
    (error: unknown) =>
      error instanceof OrgsPerUserExceededError &&
      error.status === 403 &&
      error.message === 'user alice owns 2 of 2 organisations (quota orgs-per-user).' &&
      /slipway server --orgs-per-user N/.test(error.hint ?? ''),
  );
  quotas.checkNewOrg(admin);
  assert.equal(new Quotas(store).orgsPerUser, 3);
  store.close();
});
