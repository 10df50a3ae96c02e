import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, commitAll, createApp, deploymentLog, getThroughRouter, pushAndWait, registerSshKey } from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';
import { launchBrowser, openConsolePage } from '../e2e/browser.js';
import type { CronJobView } from '../../src/shared/api-types.js';

/**
 * docs/behaviour.md, Cron jobs: jobs of clevercloud/cron.json run once per schedule for the app
 * (two instances here), a failing run reaches a webhook as cron.failed, an overlapping run is
 * skipped and logged, and a bad cron.json fails the deployment while the release keeps serving.
 * The schedules have a minute's resolution: the file waits for two minutes of runs, no more.
 */

let daemon: TestDaemon;
let gitEnv: NodeJS.ProcessEnv;
let dir: string;
let appId: string;
let receiver: Server;
let receiverPort: number;
const received: Array<{ path: string; body: string }> = [];

const JOBS = ['* * * * * /bin/sh $ROOT/tick.sh', "* * * * * /bin/sh -c 'echo about to fail; exit 3'", '* * * * * /bin/sleep 75'];

async function appLog(): Promise<string[]> {
  const r = await daemon.cli(['logs', '--app', appId, '-n', '2000', '--no-follow']);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.split('\n');
}

async function cronJobs(): Promise<CronJobView[]> {
  const r = await daemon.cli(['cron', '--app', appId, '--format', 'json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as CronJobView[];
}

before(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      received.push({ path: req.url ?? '/', body });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverPort = (receiver.address() as AddressInfo).port;
  daemon = await startDaemon();
  ({ gitEnv } = await registerSshKey(daemon));
  dir = checkoutExample('node-hello');
  mkdirSync(join(dir, 'clevercloud'));
  writeFileSync(join(dir, 'clevercloud', 'cron.json'), `${JSON.stringify(JOBS, null, 2)}\n`);
  writeFileSync(join(dir, 'tick.sh'), 'echo "tick $(date -u +%H:%M) $GREETING"\n');
  chmodSync(join(dir, 'tick.sh'), 0o755);
  commitAll(dir, 'cron jobs');
  appId = await createApp(daemon, dir, 'cron', { GREETING: 'from-the-variables' });
  const scaled = await daemon.cli(['scale', '--instances', '2', '--app', appId]);
  assert.equal(scaled.code, 0, scaled.stderr);
  const hook = await daemon.cli([
    'webhooks',
    'add',
    'cron',
    `http://127.0.0.1:${receiverPort}/cron`,
    '--event',
    'cron.failed',
    '--app',
    appId,
  ]);
  assert.equal(hook.code, 0, hook.stderr);
});

after(async () => {
  await daemon?.stop();
  receiver?.close();
});

test('the build reads clevercloud/cron.json and prints its jobs; slipway cron lists them', async () => {
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  const log = await deploymentLog(daemon, appId, result.id);
  assert.equal(result.state, 'OK', log.join('\n'));
  assert.ok(
    log.some((l) => l.includes('3 cron job(s) from clevercloud/cron.json')),
    log.join('\n'),
  );
  assert.ok(
    log.some((l) => l.includes('cron-1 (line 2): * * * * * /bin/sh $ROOT/tick.sh')),
    log.join('\n'),
  );
  const jobs = await cronJobs();
  assert.deepEqual(
    jobs.map((j) => [j.name, j.line, j.schedule, j.command]),
    JOBS.map((text, i) => [`cron-${i + 1}`, i + 2, '* * * * *', text.slice(10)]),
  );
  assert.ok(jobs.every((j) => j.next_run !== null && Date.parse(j.next_run) > Date.now() - 1000));
  const human = await daemon.cli(['cron', '--app', appId]);
  assert.match(human.stdout, /^NAME +SCHEDULE +LAST_RUN +NEXT_RUN +COMMAND/m);
  assert.match(human.stdout, /^cron-2 +\* \* \* \* \* +(never|.*UTC.*) +\d{4}-\d\d-\d\d \d\d:\d\d UTC +\/bin\/sh -c/m);
});

test('a bad cron.json fails the deployment with its line and reason; the release keeps serving', async () => {
  writeFileSync(join(dir, 'clevercloud', 'cron.json'), '[\n  "0 * * * * /bin/true",\n  "*/5 * * * * bin/relative"\n]\n');
  commitAll(dir, 'a relative command');
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  const log = await deploymentLog(daemon, appId, result.id);
  assert.equal(result.state, 'FAIL', log.join('\n'));
  assert.ok(
    log.some((l) => l.includes('==> [build] Build failed: clevercloud/cron.json, line 3 (entry 2): the command is not an absolute path')),
    log.join('\n'),
  );
  assert.ok(
    log.some((l) => l.startsWith('Hint: Each entry is "M H d m w command"')),
    log.join('\n'),
  );
  assert.ok(log.includes('The previous release keeps serving.'));
  assert.equal((await getThroughRouter(daemon, `${appId}.localhost`)).status, 200);
  assert.equal((await cronJobs()).length, 3, 'the serving release keeps its jobs');
});

test('two instances, one run per minute; a failing run reaches a webhook; an overlapping run is skipped', async () => {
  const status = await daemon.cli(['scale', '--app', appId, '--format', 'json']);
  assert.match(status.stdout, /"instances": 2/, 'the app runs two instances');
  // Two minutes that each saw a tick of cron-1 (the second also the skip of cron-3's run).
  const lines = await waitUntil(
    'two minutes of cron runs and the skip of the overlapping one',
    async () => {
      const l = await appLog();
      const minutes = new Set(l.map((x) => /\[cron-1\] tick (\d\d:\d\d)/.exec(x)?.[1]).filter(Boolean));
      const skipped = l.some((x) => /\[cron-3\] The run due at \d\d:\d\d UTC was skipped: the run started at .* is still going\./.test(x));
      return minutes.size >= 2 && skipped ? l : undefined;
    },
    200_000,
  );
  const ticks = lines.filter((l) => l.includes('[cron-1] tick '));
  assert.ok(
    ticks.every((l) => l.endsWith(' from-the-variables')),
    ticks.join('\n'),
  );
  const perMinute = new Map<string, number>();
  for (const l of ticks) {
    const minute = /tick (\d\d:\d\d)/.exec(l)![1]!;
    perMinute.set(minute, (perMinute.get(minute) ?? 0) + 1);
  }
  assert.ok(perMinute.size >= 2, ticks.join('\n'));
  for (const [minute, n] of perMinute) assert.equal(n, 1, `one run of cron-1 at ${minute}, whatever the number of instances`);
  const started = lines.filter((l) => /\[cron-1\] Run due at \d\d:\d\d UTC started/.test(l));
  assert.equal(new Set(started).size, started.length, 'no schedule time started twice');
  assert.ok(lines.includes('[cron-2] about to fail'), 'the job output is in the app log, marked with the job');
  assert.ok(lines.some((l) => /\[cron-2\] Run due at \d\d:\d\d UTC exited with code 3 after/.test(l)));

  const delivery = await waitUntil('the cron.failed webhook', async () => received.find((r) => r.path === '/cron'), 30_000);
  const payload = JSON.parse(delivery.body) as { event: string; details: Record<string, unknown>; summary: string };
  assert.equal(payload.event, 'cron.failed');
  assert.equal(payload.details.job, 'cron-2');
  assert.equal(payload.details.exit_code, 3);
  assert.match(payload.summary, /Cron job cron-2 of cron failed/);

  const jobs = await cronJobs();
  assert.equal(jobs[1]!.last_run?.exit_code, 3);
  assert.equal(jobs[1]!.last_run?.outcome, 'failed');
  assert.equal(jobs[0]!.last_run?.exit_code, 0);
  assert.ok((jobs[0]!.last_run?.duration_ms ?? -1) >= 0);
  assert.ok(
    jobs[2]!.recent.some((r) => r.outcome === 'skipped'),
    JSON.stringify(jobs[2]),
  );
});

test('the console shows the cron jobs with their last runs', async () => {
  const browser = await launchBrowser();
  try {
    const { page } = browser;
    page.setDefaultTimeout(30_000);
    await openConsolePage(page, `${daemon.apiUrl}/`);
    await page.getByLabel('API token').fill(daemon.adminToken);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Organisations' }).waitFor();
    await openConsolePage(page, `${daemon.apiUrl}/#/apps/${appId}`);
    const card = page.locator('#cron');
    await card.locator('tr[data-job="cron-2"] td[data-last-run="failed"]').getByText('exit 3').waitFor();
    await card.locator('tr[data-job="cron-1"]').getByText('/bin/sh $ROOT/tick.sh').waitFor();
    await card.locator('tr[data-job="cron-3"] li[data-outcome="skipped"]').first().waitFor();
    await browser.screenshot('cron-card');
  } finally {
    await browser.close();
  }
});
