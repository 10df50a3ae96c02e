import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { SMTPServer } from 'smtp-server';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, commitAll, createApp, deploymentLog, pushAndWait, registerSshKey } from '../support/deploy.js';
import { runCli } from '../support/cli.js';
import { waitUntil } from '../support/wait.js';
import { horizontalOverflow, launchBrowser, openConsolePage } from '../e2e/browser.js';

/** docs/behaviour.md, Notifications: a real HTTP receiver and a real SMTP server on loopback. */

interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  answered: number;
}
interface Mail {
  from: string;
  to: string[];
  raw: string;
  user: string | undefined;
}

const SMTP_PASSWORD = 'smtp-pass-7f3a';
let daemon: TestDaemon;
let receiver: Server;
let receiverPort: number;
const received: Received[] = [];
/** Paths that answer 500 to their first request, then 200. */
const failFirst = new Set(['/flaky']);
let smtp: SMTPServer;
let smtpPort: number;
const mails: Mail[] = [];
let appDir: string;
let appId: string;
let gitEnv: NodeJS.ProcessEnv;
const secrets: Record<string, string> = {};

before(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const path = req.url ?? '/';
      const earlier = received.filter((r) => r.path === path).length;
      const answered = failFirst.has(path) && earlier === 0 ? 500 : 200;
      received.push({ path, headers: req.headers, body, answered });
      res.writeHead(answered).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverPort = (receiver.address() as AddressInfo).port;

  smtp = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      if (auth.username === 'notifier' && auth.password === SMTP_PASSWORD) return callback(null, { user: auth.username });
      callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      let raw = '';
      stream.setEncoding('utf8');
      stream.on('data', (d: string) => (raw += d));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          user: session.user as string | undefined,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  smtpPort = (smtp.server.address() as AddressInfo).port;

  daemon = await startDaemon([
    '--smtp-url',
    `smtp://notifier:${SMTP_PASSWORD}@127.0.0.1:${smtpPort}`,
    '--smtp-from',
    'slipway@example.test',
  ]);
  ({ gitEnv } = await registerSshKey(daemon));
  // No package.json: the build fails at once, without fetching any tool.
  appDir = mkdtempSync(join(tmpdir(), 'slipway-notify-'));
  writeFileSync(join(appDir, 'README'), 'not an app\n');
  execFileSync('git', ['init', '-q', '-b', 'master'], { cwd: appDir });
  commitAll(appDir, 'first');
  appId = await createApp(daemon, appDir, 'notified');
});

after(async () => {
  await daemon?.stop();
  receiver?.close();
  await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
});

const hook = (path: string) => `http://127.0.0.1:${receiverPort}${path}`;

test('a webhook URL that is not http(s), or points at slipway or the sandboxes, is refused with the reason', async () => {
  const ftp = await daemon.cli(['webhooks', 'add', 'bad', 'ftp://127.0.0.1/x'], { cwd: appDir });
  assert.notEqual(ftp.code, 0);
  assert.match(ftp.stderr, /must use http or https, not ftp/);
  const api = await daemon.cli(['webhooks', 'add', 'bad', `http://127.0.0.1:${daemon.apiPort}/v1/apps`], { cwd: appDir });
  assert.notEqual(api.code, 0);
  assert.match(api.stderr, /slipway's own API/);
  const sandbox = daemon.subnet.replace('.0.0/16', '.0.1');
  const inSubnet = await daemon.cli(['webhooks', 'add', 'bad', `http://${sandbox}:5432/`], { cwd: appDir });
  assert.notEqual(inSubnet.code, 0);
  assert.match(inSubnet.stderr, /sandboxes' subnet/);
  // None was stored; and the same command with a good URL works (the refusals were about the URL).
  const list = await daemon.cli(['webhooks', '--format', 'json'], { cwd: appDir });
  assert.deepEqual(JSON.parse(list.stdout).webhooks, []);
  const good = await daemon.cli(['webhooks', 'add', 'started', hook('/started'), '--event', 'DEPLOYMENT_ACTION_BEGIN'], { cwd: appDir });
  assert.equal(good.code, 0, good.stderr);
});

test('the SMTP URL of the daemon must be smtp(s)', async () => {
  const result = await runCli(
    ['server', '--smtp-url', 'http://127.0.0.1:25/', '--data-dir', mkdtempSync(join(tmpdir(), 'slipway-smtp-'))],
    {
      timeoutMs: 30_000,
    },
  );
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /--smtp-url must be smtp:\/\/user:pass@host:port or smtps:\/\/…, not a http address/);
});

test('a failing deployment reaches a signed webhook, a Slack webhook and the SMTP server; a receiver answering 500 is retried', async () => {
  for (const [name, path, extra] of [
    ['ci', '/ci', ['--event', 'deployment.failed']],
    ['flaky', '/flaky', ['--event', 'deployment.failed']],
    ['team', '/slack', ['--format', 'slack', '--event', 'deployment.failed']],
  ] as const) {
    const added = await daemon.cli(['webhooks', 'add', name, hook(path), ...extra], { cwd: appDir });
    assert.equal(added.code, 0, added.stderr);
    secrets[name] = added.stdout.trim();
    assert.match(secrets[name]!, /^whsec_[A-Za-z0-9_-]{40,}$/);
  }
  assert.equal((await daemon.cli(['notify-email', 'address', 'admin@example.test'])).code, 0);
  const mailAdd = await daemon.cli(
    ['notify-email', 'add', 'team', '--notify', 'ops@example.test', '--notify', 'user', '--event', 'deployment.failed'],
    {
      cwd: appDir,
    },
  );
  assert.equal(mailAdd.code, 0, mailAdd.stderr);

  const deployment = await pushAndWait(daemon, appDir, appId, gitEnv);
  assert.equal(deployment.state, 'FAIL');

  // The signed raw payload.
  const ci = await waitUntil('the webhook delivery', async () => received.find((r) => r.path === '/ci'), 30_000);
  const timestamp = ci.headers['x-slipway-timestamp'] as string;
  const expected = `sha256=${createHmac('sha256', secrets.ci!).update(`${timestamp}.${ci.body}`).digest('hex')}`;
  assert.equal(ci.headers['x-slipway-signature'], expected);
  assert.ok(Math.abs(Number(timestamp) - Date.now() / 1000) < 120, 'the timestamp is now');
  assert.equal(ci.headers['x-slipway-event'], 'deployment.failed');
  const payload = JSON.parse(ci.body);
  assert.equal(payload.event, 'deployment.failed');
  assert.deepEqual(payload.app, { id: appId, name: 'notified' });
  assert.equal(payload.details.deployment_id, deployment.id);
  assert.equal(payload.details.phase, 'build');
  assert.match(payload.summary, new RegExp(`Deployment ${deployment.id} of notified failed`));
  assert.equal(payload.delivery_id, ci.headers['x-slipway-delivery']);
  // Another webhook's secret does not sign it: the check above can fail.
  const forged = `sha256=${createHmac('sha256', secrets.flaky!).update(`${timestamp}.${ci.body}`).digest('hex')}`;
  assert.notEqual(ci.headers['x-slipway-signature'], forged);

  // Slack's incoming-webhook format.
  const slack = await waitUntil('the Slack delivery', async () => received.find((r) => r.path === '/slack'), 30_000);
  assert.deepEqual(Object.keys(JSON.parse(slack.body)), ['text']);
  assert.match(JSON.parse(slack.body).text, /notified.*deployment\.failed.*failed in the build phase/);

  // The mail, through the SMTP server with the operator's credentials.
  const mail = await waitUntil('the mail', async () => mails[0], 30_000);
  assert.equal(mail.user, 'notifier');
  assert.equal(mail.from, 'slipway@example.test');
  assert.deepEqual([...mail.to].sort(), ['admin@example.test', 'ops@example.test']);
  assert.match(mail.raw, /Subject: \[slipway\] notified: deployment\.failed/);
  assert.ok(mail.raw.includes(deployment.id), mail.raw);

  // The receiver that answered 500 got the payload again, and the deliveries list shows both attempts.
  const flaky = await waitUntil(
    'the retried delivery',
    async () => {
      const listed = await daemon.cli(['webhooks', 'deliveries', 'flaky', '--format', 'json'], { cwd: appDir });
      const [delivery] = JSON.parse(listed.stdout).deliveries;
      return delivery?.state === 'delivered' ? delivery : undefined;
    },
    30_000,
  );
  assert.deepEqual(
    flaky.attempts.map((a: { attempt: number; ok: boolean; status_code: number }) => [a.attempt, a.ok, a.status_code]),
    [
      [1, false, 500],
      [2, true, 200],
    ],
  );
  assert.match(flaky.attempts[0].error, /answered 500/);
  assert.deepEqual(
    received.filter((r) => r.path === '/flaky').map((r) => r.answered),
    [500, 200],
  );
  const human = await daemon.cli(['webhooks', 'deliveries', 'flaky'], { cwd: appDir });
  assert.match(human.stdout, /deployment\.failed {2}delivered/);
  assert.match(human.stdout, /attempt 1 .* failed: the receiver answered 500/);
  assert.match(human.stdout, /attempt 2 .* ok 200/);

  // The event filter: only the started webhook heard of the start, and nothing else went to /ci.
  assert.ok(received.some((r) => r.path === '/started' && JSON.parse(r.body).event === 'deployment.started'));
  assert.deepEqual(
    received.filter((r) => r.path === '/ci').map((r) => JSON.parse(r.body).event),
    ['deployment.failed'],
  );

  const mailDeliveries = await daemon.cli(['notify-email', 'deliveries', 'team', '--format', 'json'], { cwd: appDir });
  assert.equal(JSON.parse(mailDeliveries.stdout).deliveries[0].state, 'delivered');
});

test('the console shows the app’s notifications and the attempts of the last deliveries', async () => {
  const browser = await launchBrowser();
  try {
    const { page } = browser;
    page.setDefaultTimeout(30_000);
    await openConsolePage(page, `${daemon.apiUrl}/`);
    await page.getByLabel('API token').fill(daemon.adminToken);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Organisations' }).waitFor();
    await openConsolePage(page, `${daemon.apiUrl}/#/apps/${appId}`);
    const card = page.locator('#notifications');
    await card.locator('tr[data-webhook="flaky"]').getByText('delivered').waitFor();
    await card.locator('tr[data-notify-email="team"]').getByText('e-mail: ops@example.test, user').waitFor();
    const retried = card.getByRole('listitem').filter({ hasText: 'webhook flaky' });
    await retried.getByText('attempt 1 failed (the receiver answered 500); attempt 2 ok 200').waitFor();
    await browser.screenshot('notifications-card');
    // A phone's width: the table and the deliveries wrap instead of widening the page.
    await page.setViewportSize({ width: 375, height: 812 });
    await card.locator('tr[data-webhook="flaky"]').waitFor();
    assert.equal(await horizontalOverflow(page), 0, 'the notifications overflow horizontally at 375px');
    const text = await card.innerText();
    for (const secret of Object.values(secrets)) assert.ok(!text.includes(secret));
  } finally {
    await browser.close();
  }
});

test('secrets are shown once: never in listings, deliveries nor the daemon output', async () => {
  const listing = await daemon.cli(['webhooks', '--format', 'json'], { cwd: appDir });
  assert.equal(listing.code, 0, listing.stderr);
  const names = JSON.parse(listing.stdout).webhooks.map((w: { name: string }) => w.name);
  assert.deepEqual(names, ['ci', 'flaky', 'started', 'team']);
  const shown = [
    listing.stdout,
    (await daemon.cli(['webhooks'], { cwd: appDir })).stdout,
    (await daemon.cli(['webhooks', 'deliveries', 'ci', '--format', 'json'], { cwd: appDir })).stdout,
    (await daemon.cli(['notify-email', 'list', '--format', 'json'], { cwd: appDir })).stdout,
    daemon.output(),
  ].join('\n');
  assert.ok(Object.keys(secrets).length === 3);
  for (const secret of [...Object.values(secrets), SMTP_PASSWORD]) assert.ok(!shown.includes(secret), 'a secret was shown again');
  // By name, and by id as the reference does.
  const removed = await daemon.cli(['webhooks', 'remove', 'flaky'], { cwd: appDir });
  assert.equal(removed.code, 0, removed.stderr);
  const started = JSON.parse(listing.stdout).webhooks.find((w: { name: string }) => w.name === 'started');
  const byId = await daemon.cli(['webhooks', 'remove', started.id], { cwd: appDir });
  assert.equal(byId.code, 0, byId.stderr);
  const after = JSON.parse((await daemon.cli(['webhooks', '--format', 'json'], { cwd: appDir })).stdout).webhooks;
  assert.deepEqual(
    after.map((w: { name: string }) => w.name),
    ['ci', 'team'],
  );
  const again = await daemon.cli(['webhooks', 'remove', 'flaky'], { cwd: appDir });
  assert.notEqual(again.code, 0);
  assert.match(again.stderr, /no webhook named flaky/);
});

test('a failing cron job reaches a signed webhook and the SMTP server', { timeout: 300_000 }, async () => {
  const dir = checkoutExample('node-hello');
  mkdirSync(join(dir, 'clevercloud'));
  writeFileSync(join(dir, 'clevercloud', 'cron.json'), `${JSON.stringify(["* * * * * /bin/sh -c 'exit 3'"])}\n`);
  commitAll(dir, 'a job that fails');
  const cronApp = await createApp(daemon, dir, 'scheduled');
  const added = await daemon.cli(['webhooks', 'add', 'jobs', hook('/jobs'), '--event', 'cron.failed'], { cwd: dir });
  assert.equal(added.code, 0, added.stderr);
  const secret = added.stdout.trim();
  const mailAdd = await daemon.cli(['notify-email', 'add', '--notify', 'cron@example.test', '--event', 'cron.failed'], { cwd: dir });
  assert.equal(mailAdd.code, 0, mailAdd.stderr);
  const deployment = await pushAndWait(daemon, dir, cronApp, gitEnv);
  assert.equal(deployment.state, 'OK', (await deploymentLog(daemon, cronApp, deployment.id)).join('\n'));

  // The job runs at the next minute.
  const delivered = await waitUntil('the cron.failed webhook', async () => received.find((r) => r.path === '/jobs'), 150_000);
  const timestamp = delivered.headers['x-slipway-timestamp'] as string;
  assert.equal(
    delivered.headers['x-slipway-signature'],
    `sha256=${createHmac('sha256', secret).update(`${timestamp}.${delivered.body}`).digest('hex')}`,
  );
  const payload = JSON.parse(delivered.body);
  assert.equal(payload.event, 'cron.failed');
  assert.deepEqual(payload.app, { id: cronApp, name: 'scheduled' });
  assert.equal(payload.details.exit_code, 3);
  const mail = await waitUntil('the cron.failed mail', async () => mails.find((m) => m.to.includes('cron@example.test')), 30_000);
  assert.match(mail.raw, /Subject: \[slipway\] scheduled: cron\.failed/);
  assert.match(mail.raw, /exit_code: 3/);
});
