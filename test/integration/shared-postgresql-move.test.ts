/**
 * The first start of the version with a server per PostgreSQL add-on, on a data folder made by
 * the last build that kept every PostgreSQL add-on in one shared cluster: both add-ons move to
 * servers of their own with every row, role and password, the linked app is restarted onto its
 * add-on's new server while it serves, and the shared cluster stops for good.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cliJson, postgresUriOf, sql } from '../support/addon-cli.js';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, createApp, deploymentLog, getThroughRouter, pushAndWait, registerSshKey } from '../support/deploy.js';
import { buildCommit, REPO } from '../support/previous-build.js';
import { waitUntil } from '../support/wait.js';

/** The last commit whose PostgreSQL add-ons share one cluster. */
const SHARED_CLUSTER_BUILD = '80a053e32804b6495172564a1ea191f49f487e43';
const ROWS = 20_000;

let daemon: TestDaemon;
let host: string;
let previous: string;
let oldBackup: string;

before(async () => {
  const build = buildCommit(SHARED_CLUSTER_BUILD);
  previous = build.commit;
  daemon = await startDaemon([], { bin: build.bin });
  const { gitEnv } = await registerSshKey(daemon);
  const dir = checkoutExample('node-addons');
  const appId = await createApp(daemon, dir, 'shop');
  host = `${appId}.localhost`;
  await cliJson(daemon, ['addon', 'create', 'postgresql', 'shop-db', '--link', appId]);
  await cliJson(daemon, ['addon', 'create', 'redis', 'shop-cache', '--link', appId]);
  await cliJson(daemon, ['addon', 'create', 'postgresql', 'reports']);
  for (const addon of ['shop-db', 'reports']) {
    const uri = await postgresUriOf(daemon, addon);
    await sql(uri, `CREATE TABLE facts AS SELECT g AS id, md5(g::text) AS body FROM generate_series(1, ${ROWS}) g`);
    await sql(uri, 'ALTER TABLE facts ADD PRIMARY KEY (id)');
  }
  // A backup taken on the shared cluster, to restore once the add-on has moved.
  oldBackup = (await cliJson<{ id: string }>(daemon, ['addon', 'backup', 'reports'])).id;
  await waitUntil('the old backup to be restore-tested', async () => {
    const listed = await cliJson<Array<{ id: string; verification: string }>>(daemon, ['addon', 'backups', 'reports']);
    return listed.find((b) => b.id === oldBackup)?.verification === 'verified';
  });
  const deployed = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(deployed.state, 'OK', (await deploymentLog(daemon, appId, deployed.id)).join('\n'));
  assert.equal((await getThroughRouter(daemon, host, '/remember?value=before')).status, 200);
});

after(async () => {
  await daemon?.stop();
});

test('both add-ons move to servers of their own while the app serves: every read and write answered, none lost', {
  timeout: 600_000,
}, async () => {
  const portsBefore = await Promise.all(['shop-db', 'reports'].map(async (a) => new URL(await postgresUriOf(daemon, a)).port));
  let running = true;
  const reads = { ok: 0, failed: [] as string[] };
  const writes = { done: [] as string[], failed: [] as string[] };
  const reader = (async () => {
    while (running) {
      const answer = await getThroughRouter(daemon, host, '/db').catch((error: Error) => ({ status: 0, body: error.message }));
      if (answer.status === 200) reads.ok++;
      else reads.failed.push(`${answer.status} ${answer.body.slice(0, 120)}`);
      await sleep(20);
    }
  })();
  const writer = (async () => {
    for (let i = 0; running; i++) {
      const value = `during-${i}`;
      const answer = await getThroughRouter(daemon, host, `/remember?value=${value}`, {}, 120_000).catch((error: Error) => ({
        status: 0,
        body: error.message,
      }));
      if (answer.status === 200) writes.done.push(value);
      else writes.failed.push(`${value}: ${answer.status} ${answer.body.slice(0, 120)}`);
      await sleep(50);
    }
  })();
  await sleep(1000);
  assert.equal(await daemon.terminate(), 0, `the build of ${previous} stopped`);
  await daemon.restart({ bin: join(REPO, 'bin', 'slipway.js') });
  await waitUntil(
    'the shared cluster to be retired',
    () => /No add-on is left on the shared PostgreSQL cluster/.test(daemon.output()),
    300_000,
  );
  await sleep(2000);
  running = false;
  await Promise.all([reader, writer]);

  console.log(
    daemon
      .output()
      .match(/The PostgreSQL add-on .* now has a server of its own.*/g)
      ?.join('\n'),
  );
  console.log(
    `during the move: ${reads.ok} reads answered, ${reads.failed.length} failed; ${writes.done.length} writes done, ${writes.failed.length} failed`,
  );
  assert.match(
    daemon.output(),
    /The PostgreSQL add-on shop-db now has a server of its own \(2 tables, \d+ rows copied; its apps' requests waited [\d.]+ s\)/,
  );
  assert.match(daemon.output(), new RegExp(`The PostgreSQL add-on reports now has a server of its own \\(1 tables?, ${ROWS} rows copied`));
  assert.deepEqual(reads.failed, [], `reads failed during the move (${reads.ok} answered)`);
  assert.ok(reads.ok > 20, `only ${reads.ok} reads were answered`);
  assert.ok(writes.done.length > 5, `only ${writes.done.length} writes went through`);
  // Held at the router while the data moved, then answered by the new instances: none failed.
  assert.deepEqual(writes.failed, [], 'no write failed');

  // Each add-on: its own port now, every row, the same role and password in its URI.
  for (const [i, addon] of ['shop-db', 'reports'].entries()) {
    const uri = await postgresUriOf(daemon, addon);
    assert.notEqual(new URL(uri).port, portsBefore[i], `${addon} has a port of its own`);
    assert.deepEqual(await sql(uri, 'SELECT count(*)::int AS n FROM facts'), [{ n: ROWS }]);
  }
  const recalled = JSON.parse((await getThroughRouter(daemon, host, '/recall')).body) as { database: string[] };
  for (const value of ['before', ...writes.done]) assert.ok(recalled.database.includes(value), `the write ${value} is in the moved add-on`);

  // A backup taken on the shared cluster still restores, into a new add-on of its own; the
  // moved add-on has a first backup on its own server.
  await cliJson(daemon, ['addon', 'restore', 'reports', '--backup', oldBackup, '--as', 'reports-then']);
  assert.deepEqual(await sql(await postgresUriOf(daemon, 'reports-then'), 'SELECT count(*)::int AS n FROM facts'), [{ n: ROWS }]);
  const listed = await cliJson<Array<{ id: string; kind: string }>>(daemon, ['addon', 'backups', 'reports']);
  assert.ok(
    listed.some((b) => b.id !== oldBackup && b.kind === 'scheduled'),
    'a backup on its own server was taken after the move',
  );

  // The shared cluster is stopped; its data folder is kept aside, not started again.
  const folder = join(daemon.dataDir, 'postgresql');
  assert.equal(existsSync(join(folder, 'data')), false);
  assert.ok(readdirSync(folder).some((name) => name.startsWith('shared-cluster-moved-')));
});
