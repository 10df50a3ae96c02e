/**
 * The console's application actions end to end: one daemon, one deployed example with two
 * releases, Debian's Chromium driven by playwright-core with the mouse and the keyboard, and
 * each action's effect checked through the API and the router. Screenshots go to
 * test-artifacts/console/.
 */
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, createApp, deploymentLog, getThroughRouter, newRelease, pushAndWait, registerSshKey } from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';
import { horizontalOverflow, launchBrowser, openConsolePage, type TestBrowser, type UiTestArgs, uiTest as browserTest } from './browser.js';

let daemon: TestDaemon;
let browser: TestBrowser;
let page: Page;
let appId: string;
let host: string;
const releases: Record<string, string> = {};

async function api<T = Record<string, any>>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await fetch(`${daemon.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${daemon.adminToken}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: response.status, body: (await response.json()) as T };
}

async function served(): Promise<string> {
  const response = await getThroughRouter(daemon, host);
  assert.equal(response.status, 200, response.body);
  return String((JSON.parse(response.body) as { release: string }).release);
}

function open(hash: string): Promise<void> {
  return openConsolePage(page, `${daemon.apiUrl}/${hash}`);
}

/** Opens a page and checks its title. */
async function opened(hash: string, title: RegExp): Promise<void> {
  await open(hash);
  await page.getByRole('heading', { level: 1, name: title }).waitFor();
}

/** Waits for the outcome box to show the end of the deployment an action started; returns its id. */
async function startedDeploymentEnded(): Promise<string> {
  const box = page.locator('.outcome[data-state]:not([data-state="WIP"])');
  await box.waitFor({ timeout: 180_000 });
  const id = (await box.getAttribute('data-deployment'))!;
  assert.match(await box.innerText(), new RegExp(`deployment ${id} ended OK`));
  return id;
}

/** Each test's failure carries what the browser saw meanwhile. */
const uiTest = (name: string, ...rest: UiTestArgs) => browserTest(() => browser, name, ...rest);

before(async () => {
  daemon = await startDaemon();
  browser = await launchBrowser();
  page = browser.page;
  page.setDefaultTimeout(60_000);
  const { gitEnv } = await registerSshKey(daemon);
  const dir = checkoutExample('node-hello');
  appId = await createApp(daemon, dir, 'web-shop');
  host = `${appId}.localhost`;
  for (const name of ['one', 'two']) {
    newRelease(dir, name);
    const result = await pushAndWait(daemon, dir, appId, gitEnv);
    assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
    releases[name] = result.id;
  }
  await opened('', /^Sign in to slipway$/);
  await page.getByLabel('API token').fill(daemon.adminToken);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Organisations' }).waitFor();
});

after(async () => {
  await browser?.close();
  await daemon?.stop();
});

uiTest('the Logs page shows the application output and follows it live', async () => {
  await opened(`#/apps/${appId}`, /Information$/);
  await page.getByRole('link', { name: 'Logs', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'web-shop: Logs' }).waitFor();
  const log = page.locator('pre.log[data-live="true"]');
  await log.getByText('release two listening').first().waitFor();
  // Written after the page opened: it can only appear through the live stream.
  const crash = await getThroughRouter(daemon, host, '/crash');
  assert.equal(crash.status, 200);
  await log.getByText('crashing on purpose').waitFor();
  await browser.screenshot('actions-logs-live');
});

uiTest("the programs' colour codes show as colours on the Logs page and are left out of piped `slipway logs`", async () => {
  await opened(`#/apps/${appId}/logs`, /Logs$/);
  const log = page.locator('pre.log[data-live="true"]');
  await log.waitFor();
  // The instance the previous test crashed may still be coming back.
  await waitUntil(
    'the app to log in colour',
    async () => ((await getThroughRouter(daemon, host, '/log-colours')).status === 200 ? true : undefined),
    60_000,
  );
  await log.locator('span.ansi-blue', { hasText: 'INFO' }).waitFor();
  await log.locator('span.ansi-cyan', { hasText: 'coloured.Logger' }).waitFor();
  assert.doesNotMatch(await log.innerText(), /\[(0;)?3\d(;\d+)*m/, 'no escape sequence shown raw');
  const piped = await daemon.cli(['logs', '--app', appId, '--no-follow']);
  assert.equal(piped.code, 0, piped.stderr);
  assert.match(piped.stdout, /INFO {2}coloured\.Logger - a line with colours/);
  assert.doesNotMatch(piped.stdout, /\x1b/, 'a pipe gets no escape sequence');
  await browser.screenshot('actions-logs-colours');
});

uiTest('Restart starts the current release again; the page names the deployment and its end', async () => {
  await opened(`#/apps/${appId}`, /Information$/);
  await page.getByRole('button', { name: 'Restart', exact: true }).focus();
  await page.keyboard.press('Enter');
  const id = await startedDeploymentEnded();
  const { body } = await api(`GET`, `/v1/apps/${appId}/deployments/${id}`);
  assert.deepEqual([body.deployment.state, body.deployment.cause], ['OK', 'restart requested']);
  assert.equal(await served(), 'two');
  await browser.screenshot('actions-restarted');
});

uiTest('Roll back on a kept deployment serves its release again, without a rebuild', async () => {
  await opened(`#/apps/${appId}`, /Information$/);
  const first = page.locator(`li[data-deployment="${releases.one}"]`);
  await first.getByRole('button', { name: /^Roll back to commit/ }).click();
  const id = await startedDeploymentEnded();
  const { body } = await api(`GET`, `/v1/apps/${appId}/deployments/${id}`);
  assert.deepEqual([body.deployment.state, body.deployment.cause], ['OK', `rollback to deployment ${releases.one}`]);
  assert.equal(await served(), 'one');
  const log = await deploymentLog(daemon, appId, id);
  assert.ok(!log.some((l) => l.includes('Build plan')), 'a rollback does not build');
  // The rollback now serves, and the newer release is offered in its turn.
  await page.locator(`li[data-deployment="${id}"]`).getByText('Serving').waitFor();
  await page
    .locator(`li[data-deployment="${releases.two}"]`)
    .getByRole('button', { name: /^Roll back to commit/ })
    .waitFor();
  await browser.screenshot('actions-rolled-back');
});

uiTest('Scaling sets the instance count at once and the flavour for the next start; a bad count is refused in the form', async () => {
  await opened(`#/apps/${appId}/scaling`, /Scaling$/);
  const count = page.getByLabel('Instance count');
  await count.fill('41');
  await count.press('Enter');
  // A fixed count leaves "up to" empty; 0 is accepted with an "up to" of 1 or more (scale to zero).
  await page.getByText(/^The instance count is a whole number from 1 to 40 \(0 with an "up to" of 1 or more/).waitFor();
  assert.equal(await count.getAttribute('aria-invalid'), 'true');
  assert.equal((await api('GET', `/v1/apps/${appId}/scale`)).body.scale.instances, 1, 'nothing was saved');

  await count.fill('2');
  await page.getByLabel('Flavour from').selectOption('pico');
  await page.getByRole('button', { name: 'Save scaling' }).click();
  await page
    .locator('.outcome')
    .getByText(
      /^Saved: 2 instances of pico; the instance count applied at once; the flavour applies at the next deployment or restart\. No deployment was started\.$/,
    )
    .waitFor();
  const { scale } = (await api('GET', `/v1/apps/${appId}/scale`)).body;
  assert.deepEqual([scale.instances, scale.flavor], [2, 'pico']);
  await page.locator('tr[data-instance]').nth(1).waitFor();
  const status = (await api('GET', `/v1/apps/${appId}/status`)).body;
  assert.equal(status.instances.length, 2);
  await browser.screenshot('actions-scaled');

  // A range: the autoscaler chooses the count from 2 to 3; then a fixed count again.
  await page.getByLabel('Autoscale up to').fill('3');
  await page.getByRole('button', { name: 'Save scaling' }).click();
  await page
    .locator('.outcome')
    .getByText(/^Saved: 2 to 3 instances of pico, the autoscaler choosing from its measured load\. No deployment was started\.$/)
    .waitFor();
  await page.locator('#autoscaling').getByText('2 now; the autoscaler chooses from 2 to 3.').waitFor();
  const ranged = (await api('GET', `/v1/apps/${appId}/scale`)).body.scale;
  assert.deepEqual([ranged.min_instances, ranged.max_instances], [2, 3]);
  await page.getByLabel('Autoscale up to').fill('2');
  await page.getByRole('button', { name: 'Save scaling' }).click();
  await page.locator('#autoscaling').getByText('A fixed count of 2.').waitFor();
  const fixed = (await api('GET', `/v1/apps/${appId}/scale`)).body.scale;
  assert.deepEqual([fixed.min_instances, fixed.max_instances, fixed.instances], [2, 2, 2]);
});

uiTest('Scaling sets a range of flavours; a "from" larger than its "up to" is refused in the form', async () => {
  await opened(`#/apps/${appId}/scaling`, /Scaling$/);
  const from = page.getByLabel('Flavour from');
  const upTo = page.getByLabel('Flavour up to');
  const save = page.getByRole('button', { name: 'Save scaling' });
  await from.selectOption('S');
  await upTo.selectOption('nano');
  await save.click();
  await page
    .getByText(
      '"Flavour from" (S) is larger than "Flavour up to" (nano): choose an "up to" of S or larger, or "The same" for a fixed flavour.',
    )
    .waitFor();
  assert.equal(await upTo.getAttribute('aria-invalid'), 'true');
  assert.equal((await api('GET', `/v1/apps/${appId}/scale`)).body.scale.max_flavor, 'pico', 'nothing was saved');

  await from.selectOption('pico');
  await upTo.selectOption('XS');
  await save.click();
  await page
    .locator('.outcome')
    .getByText(/^Saved: 2 instances of pico to XS, the autoscaler choosing from its measured load\. No deployment was started\.$/)
    .waitFor();
  await page.locator('#autoscaling').getByText('A fixed count of 2. Flavour pico now; the autoscaler chooses from pico to XS.').waitFor();
  assert.equal(await upTo.getAttribute('aria-invalid'), null, 'the error went with the fix');
  const { scale } = (await api('GET', `/v1/apps/${appId}/scale`)).body;
  assert.deepEqual([scale.flavor, scale.min_flavor, scale.max_flavor], ['pico', 'pico', 'XS']);
  const printed = await daemon.cli(['scale', '--app', appId]);
  assert.equal(printed.code, 0, printed.stderr);
  assert.match(printed.stdout, /^flavor\s+pico \(256 MiB\) \(the autoscaler chooses from pico to XS\)$/m);
  await browser.screenshot('actions-flavour-range');

  // "The same" is a fixed flavour again.
  await upTo.selectOption({ label: 'The same (a fixed flavour)' });
  await save.click();
  await page
    .locator('.outcome')
    .getByText(/^Saved: 2 instances of pico\. No deployment was started\.$/)
    .waitFor();
  const fixed = (await api('GET', `/v1/apps/${appId}/scale`)).body.scale;
  assert.deepEqual([fixed.flavor, fixed.min_flavor, fixed.max_flavor], ['pico', 'pico', 'pico']);
});

uiTest('Scaling gives the workers a range of worker instances of their own, which a restart starts', async () => {
  const worker = await daemon.cli(['env', 'set', 'CC_WORKER_COMMAND', 'exec sleep 100000', '--app', appId]);
  assert.equal(worker.code, 0, worker.stderr);
  await opened(`#/apps/${appId}/scaling`, /Scaling$/);
  const count = page.getByLabel('Worker instances');
  const upTo = page.getByLabel('Workers up to');
  const save = page.getByRole('button', { name: 'Save scaling' });
  assert.equal(await count.isVisible(), false, 'no worker instance count while the workers run beside each instance');
  await page.getByLabel('Workers run').selectOption({ label: 'In worker instances of their own' });
  await count.fill('2');
  await upTo.fill('1');
  await save.click();
  await page
    .getByText(
      '"Workers up to" (1) is under the number of worker instances (2): give 2 or more for the autoscaler to choose, or leave it empty for a fixed number.',
    )
    .waitFor();
  assert.equal((await api('GET', `/v1/apps/${appId}/scale`)).body.scale.workers, null, 'nothing was saved');

  await count.fill('1');
  await upTo.fill('2');
  await save.click();
  // The workers move at the next start: the page says so, and its restart starts the worker instance.
  await page
    .locator('.outcome')
    .getByText(
      /^Saved: 2 instances of pico; the workers run in 1 to 2 worker instances of their own\. The workers move at the next deployment/,
    )
    .waitFor();
  const ranged = (await api('GET', `/v1/apps/${appId}/scale`)).body.scale;
  assert.deepEqual([ranged.workers.min, ranged.workers.max], [1, 2]);
  await page.getByRole('button', { name: 'Restart to apply the flavour and workers' }).click();
  await startedDeploymentEnded();
  await page.locator('#autoscaling').getByText('Workers: 1 worker instance now, 1 running; the autoscaler chooses from 1 to 2.').waitFor();
  const printed = await daemon.cli(['scale', '--app', appId]);
  assert.equal(printed.code, 0, printed.stderr);
  assert.match(printed.stdout, /^workers\s+1 worker instance \(the autoscaler chooses from 1 to 2\)$/m);
  await browser.screenshot('actions-workers-range');
});

uiTest('the new pages are readable at 375px wide: nothing overflows horizontally', async () => {
  await page.setViewportSize({ width: 375, height: 812 });
  try {
    for (const [name, hash, title] of [
      ['information', `#/apps/${appId}`, /Information$/],
      ['scaling', `#/apps/${appId}/scaling`, /Scaling$/],
      ['logs', `#/apps/${appId}/logs`, /Logs$/],
    ] as const) {
      await opened(hash, title);
      assert.equal(await horizontalOverflow(page), 0, `${name} overflows horizontally at 375px`);
      await browser.screenshot(`actions-narrow-${name}`);
    }
  } finally {
    await page.setViewportSize({ width: 1280, height: 900 });
  }
});

uiTest('Stop stops every instance and says that no deployment was started', async () => {
  await opened(`#/apps/${appId}`, /Information$/);
  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  await page
    .locator('.outcome')
    .getByText('Stopped web-shop: the router answers 503 until the next deployment or restart. No deployment was started.')
    .waitFor();
  const status = (await api('GET', `/v1/apps/${appId}/status`)).body;
  assert.deepEqual([status.status, status.instances.length], ['stopped', 0]);
  assert.equal((await getThroughRouter(daemon, host)).status, 503);
});

uiTest('Delete asks for the typed name, then removes the application', async () => {
  await opened(`#/apps/${appId}`, /Information$/);
  const confirm = page.getByLabel('Type web-shop to confirm');
  await confirm.fill('web-sho');
  await confirm.press('Enter');
  await page.getByText("Type the application's name, web-shop, exactly: nothing was deleted.").waitFor();
  assert.equal((await api('GET', `/v1/apps/${appId}`)).status, 200, 'a wrong name deletes nothing');

  await confirm.fill('web-shop');
  await page.getByRole('button', { name: 'Delete application' }).click();
  await page.getByRole('heading', { level: 1, name: 'web-shop deleted' }).waitFor({ timeout: 120_000 });
  await browser.screenshot('actions-deleted');
  assert.equal((await api('GET', `/v1/apps/${appId}`)).status, 404);
  await page.getByRole('link', { name: 'Back to the organisations' }).click();
  await page.getByText('No applications yet.').waitFor();
});
