import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutFixture, createApp, deploymentLog, newRelease, pushAndWait, registerSshKey } from '../support/deploy.js';
import { cliJson } from '../support/addon-cli.js';
import { steadyLoad } from '../support/steady-load.js';
import type { AddonView } from '../../src/shared/api-types.js';

// Exclusive volumes on the local backend (issue 34, item 3): a real SQLite app (node:sqlite) on
// a volume one instance mounts at a time, written under keep-alive and POST load across a
// deploy, another, a restart and a rollback, then across a deploy whose release fails its health
// check. Scaling past one instance and linking a second app are refused with the reason.
let daemon: TestDaemon;
let gitEnv: NodeJS.ProcessEnv;
let dir: string;
let app: string;

interface Check {
  release: string;
  integrity: string;
  orders: number;
  boots: Array<{ pid: number; release: string; started_ms: number; stopped_ms: number | null }>;
}

function check(): Promise<Check> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: daemon.routerPort, path: '/check', agent: false, headers: { host: `${app}.localhost` } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(text) as Check) : reject(new Error(`/check: ${text}`))));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function cliOk(args: string[]): Promise<string> {
  const result = await daemon.cli(args, { timeoutMs: 300_000 });
  assert.equal(result.code, 0, `slipway ${args.join(' ')} failed:\n${result.stderr}`);
  return `${result.stdout}${result.stderr}`;
}

async function deploy(release: string): Promise<string[]> {
  newRelease(dir, release);
  const result = await pushAndWait(daemon, dir, app, gitEnv);
  const log = await deploymentLog(daemon, app, result.id);
  assert.equal(result.state, 'OK', log.join('\n'));
  return log;
}

/** Each process that opened the database had stopped (and closed it) before the next one opened it. */
function assertOneWriterAtATime(boots: Check['boots']): void {
  for (let i = 1; i < boots.length; i++) {
    const before = boots[i - 1]!;
    assert.ok(before.stopped_ms !== null, `boot ${i - 1} (${before.release}) never stopped, yet boot ${i} opened the database`);
    assert.ok(
      boots[i]!.started_ms >= before.stopped_ms,
      `boot ${i} (${boots[i]!.release}) opened the database before boot ${i - 1} closed it`,
    );
  }
}

before(async () => {
  daemon = await startDaemon();
  ({ gitEnv } = await registerSshKey(daemon));
  dir = checkoutFixture('sqlite-app');
  app = await createApp(daemon, dir, 'ledger');
  await cliJson<AddonView>(daemon, ['addon', 'create', 'fs-bucket', 'ledger-db', '--exclusive', '--plan', '64M']);
  await cliOk(['service', 'link-addon', 'ledger-db', '--app', app, '--mount', '/data']);
  await deploy('s1');
});

after(async () => {
  await daemon?.stop();
});

test('more than one instance, a second app or two apps at creation are refused with the reason; nothing changes', async () => {
  const listed = (await cliJson<AddonView[]>(daemon, ['addon', 'list'])).find((a) => a.name === 'ledger-db')!;
  assert.equal(listed.bucket!.exclusive, true);
  assert.match(await cliOk(['addon', 'info', 'ledger-db']), /exclusive/);

  const scaled = await daemon.cli(['scale', '--instances', '2', '--app', app]);
  assert.equal(scaled.code, 1);
  assert.match(scaled.stderr, /mounts the exclusive volume ledger-db, which one instance at a time may mount: it cannot run 2 instances/);
  const ranged = await daemon.cli(['scale', '--min-instances', '1', '--max-instances', '3', '--app', app]);
  assert.equal(ranged.code, 1);
  assert.match(ranged.stderr, /it cannot run 3 instances/);
  const byApi = await fetch(`${daemon.apiUrl}/v1/apps/${app}/instances`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${daemon.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ count: 2 }),
  });
  assert.equal(byApi.status, 409);
  assert.match(((await byApi.json()) as { error: { message: string } }).error.message, /exclusive volume ledger-db/);
  const scale = await cliJson<{ instances: number; max_instances: number }>(daemon, ['scale', '--app', app]);
  assert.deepEqual([scale.instances, scale.max_instances], [1, 1], 'the scale is unchanged');

  const other = await createApp(daemon, checkoutFixture('sqlite-app'), 'ledger-copy');
  const linked = await daemon.cli(['service', 'link-addon', 'ledger-db', '--app', other, '--mount', '/data']);
  assert.equal(linked.code, 1);
  assert.match(linked.stderr, /The exclusive volume ledger-db is linked to ledger already; one application at a time may mount it/);
  const both = await daemon.cli(['addon', 'create', 'fs-bucket', 'two-apps', '--exclusive', '--link', app, '--link', other]);
  assert.equal(both.code, 1);
  assert.match(both.stderr, /An exclusive volume is mounted by one application at a time; 2 were given/);
  await cliOk(['scale', '--instances', '2', '--app', other]);
  const wide = await daemon.cli(['addon', 'create', 'fs-bucket', 'wide', '--exclusive', '--link', other]);
  assert.equal(wide.code, 1);
  assert.match(wide.stderr, /The application ledger-copy may run 2 instances/);
  const names = (await cliJson<AddonView[]>(daemon, ['addon', 'list'])).map((a) => a.name);
  assert.deepEqual(names, ['ledger-db'], 'no add-on was made by a refused creation');
  const redis = await daemon.cli(['addon', 'create', 'redis', 'cache', '--exclusive']);
  assert.equal(redis.code, 1);
  assert.match(redis.stderr, /--exclusive is for FS buckets/);
});

test('two deploys, a restart and a rollback under load hand the volume over: no failed request, no lost write, one writer at a time', {
  timeout: 600_000,
}, async () => {
  // Counted before the load starts: every row after it is one of its POSTs.
  const before = (await check()).orders;
  const load = steadyLoad(daemon, `${app}.localhost`);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const log = await deploy('s2');
  assert.ok(
    log.some((l) => /\[handover\] The previous instance finished its requests \([\d.]+ s\) and stopped/.test(l)),
    log.join('\n'),
  );
  await deploy('s3');
  await cliOk(['restart', '--app', app]);
  await cliOk(['rollback', '--app', app]);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const { failures, failureCount, releases, counts, longestGapMs } = await load.stop();
  assert.deepEqual(failures, [], `failed requests: ${failureCount}`);
  assert.ok(
    ['s1', 's2', 's3'].every((r) => releases.has(r)),
    `every release served (${[...releases].join(', ')})`,
  );
  const after = await check();
  assert.equal(after.release, 's2', 'the rollback serves the release before the last');
  assert.equal(after.integrity, 'ok');
  assert.equal(after.orders - before, counts.post, 'one row per acknowledged POST, none lost');
  assertOneWriterAtATime(after.boots);
  assert.ok(longestGapMs < 30_000, `requests waited ${longestGapMs} ms at most`);
});

test('a release that fails its health check gives the volume back: the previous one serves, nothing is lost', {
  timeout: 300_000,
}, async () => {
  // Counted before the load starts: every row after it is one of its POSTs.
  const before = (await check()).orders;
  const load = steadyLoad(daemon, `${app}.localhost`);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  newRelease(dir, 'bad');
  const result = await pushAndWait(daemon, dir, app, gitEnv);
  const log = (await deploymentLog(daemon, app, result.id)).join('\n');
  assert.equal(result.state, 'FAIL', log);
  assert.match(log, /Health check failed/);
  assert.match(log, /\[handover\] The new release did not start: the previous one starts again on the volume/);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const { failures, failureCount, counts } = await load.stop();
  assert.deepEqual(failures, [], `failed requests: ${failureCount}`);
  const after = await check();
  assert.equal(after.release, 's2', 'the previous release serves again');
  assert.equal(after.integrity, 'ok');
  assert.equal(after.orders - before, counts.post, 'one row per acknowledged POST, none lost');
  assert.ok(
    after.boots.some((b) => b.release === 'bad'),
    'the failed release did open the database (it had the volume)',
  );
  assertOneWriterAtATime(after.boots);
});
