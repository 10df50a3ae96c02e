/**
 * End-to-end tests of the web console: a real daemon, Debian's Chromium driven by
 * playwright-core, each flow done with the keyboard or the mouse, and its effect checked
 * through the API. Screenshots go to test-artifacts/console/.
 */
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, commitAll, getThroughRouter, gitPush, registerSshKey } from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { freePort } from '../support/free-port.js';
import { join } from 'node:path';
import {
  gotoPage,
  horizontalOverflow,
  openConsolePage,
  launchBrowser,
  nonLoopback,
  type TestBrowser,
  type UiTestArgs,
  uiTest as browserTest,
} from './browser.js';

let daemon: TestDaemon;
let browser: TestBrowser;
let page: Page;
let orgId: string;
let webShop: { id: string; git_url: string; domain: string };
let apiBackendId: string;

async function api<T = Record<string, any>>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${daemon.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${daemon.adminToken}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

const envOf = async (appId: string) => (await api<{ env: Array<{ name: string; value: string }> }>('GET', `/v1/apps/${appId}/env`)).env;

function open(hash: string): Promise<void> {
  return openConsolePage(page, `${daemon.apiUrl}/${hash}`);
}

/** Waits for the page titled `name` to have rendered whole: its view has cleared aria-busy and taken the focus. */
async function showing(name: string | RegExp): Promise<void> {
  await page.getByRole('heading', { level: 1, name }).waitFor();
  await page.locator('main:not([aria-busy])').waitFor();
}

/** Presses Tab until the focused element's text or label matches; fails after `max` presses. */
async function tabTo(name: RegExp, max = 40): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    // Until the page has rendered, Tab can leave the focus on <body>, whose text holds every
    // name on the page: only a focused element other than the body counts.
    const label = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      if (!el || el === document.body || el === document.documentElement) return '';
      return `${el.getAttribute('aria-label') ?? ''} ${el.textContent ?? ''}`.trim();
    });
    if (name.test(label)) return;
  }
  throw new Error(`Tab never reached an element named ${name}`);
}

/** Each test's failure carries what the browser saw meanwhile. */
const uiTest = (name: string, ...rest: UiTestArgs) => browserTest(() => browser, name, ...rest);

before(async () => {
  // A PostgreSQL cluster port of its own, clear of other daemons of this machine.
  process.env.SLIPWAY_POSTGRES_PORT = String(await freePort());
  daemon = await startDaemon();
  browser = await launchBrowser();
  page = browser.page;
  page.setDefaultTimeout(60_000);
  const { orgs } = await api<{ orgs: Array<{ id: string; name: string }> }>('GET', '/v1/orgs');
  orgId = orgs.find((o) => o.name === 'default')!.id;
});

after(async () => {
  await browser?.close();
  if (daemon) {
    await daemon.stop();
    rmSync(`${daemon.dataDir}-backups`, { recursive: true, force: true });
  }
});

uiTest('sign in with an API token; a wrong token is refused in the form', async () => {
  await open('');
  await showing('Sign in to slipway');
  await page.getByLabel('API token').fill('not-a-real-token');
  await page.keyboard.press('Enter');
  await page.getByText('The daemon does not know this token').waitFor();
  assert.equal(await page.getByLabel('API token').getAttribute('aria-invalid'), 'true');
  await browser.screenshot('sign-in-refused');

  await page.getByLabel('API token').fill(daemon.adminToken);
  await page.keyboard.press('Enter');
  await showing('Organisations');
  await page.getByRole('heading', { level: 2, name: 'default' }).waitFor();
  await page.getByText('Signed in as admin').waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem('slipway.token')), daemon.adminToken);
  await browser.screenshot('organisations-empty');
});

uiTest('create an application with the keyboard; the API validation error shows beside the name', async () => {
  await open('#/');
  await showing('Organisations');
  await tabTo(/Create an application/);
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
  assert.notEqual(outline, 'none', 'the focused link shows a visible focus outline');
  await page.keyboard.press('Enter');
  await showing('Create an application');
  assert.equal(await page.getByLabel('Organisation').inputValue(), orgId, 'the organisation comes preselected');

  await page.getByLabel('Name').focus();
  await page.keyboard.type('bad/name!');
  await page.keyboard.press('Enter');
  const nameError = page.locator('.field-error:visible');
  await nameError.waitFor();
  assert.match(await nameError.innerText(), /Invalid application name "bad\/name!"/);
  assert.equal(await page.getByLabel('Name').getAttribute('aria-invalid'), 'true');
  assert.equal((await api('GET', `/v1/apps?org=${orgId}`)).apps.length, 0, 'nothing was created');
  await browser.screenshot('create-app-invalid-name');

  await page.getByLabel('Name').fill('web-shop');
  // The types are the daemon's providers, as GET /v1/app-types lists them.
  assert.deepEqual(await page.getByLabel('Type').locator('option').allInnerTexts(), [
    'Node.js or Bun (node)',
    'Scala or Java built with sbt (sbt)',
  ]);
  await page.getByLabel('Type').selectOption('node');
  await page.getByLabel('Region').focus();
  await page.keyboard.press('ArrowDown'); // par -> mtl
  assert.equal(await page.getByLabel('Region').inputValue(), 'mtl');
  await page.getByRole('button', { name: 'Create application' }).press('Enter');
  await showing('web-shop: Information');

  const { apps } = await api('GET', `/v1/apps?org=${orgId}`);
  assert.equal(apps.length, 1);
  webShop = apps[0];
  assert.deepEqual([apps[0].name, apps[0].type, apps[0].region], ['web-shop', 'node', 'mtl']);
  assert.ok(page.url().endsWith(`#/apps/${webShop.id}`));

  const gitUrl = await page.getByLabel('Git deployment URL').inputValue();
  assert.equal(gitUrl, webShop.git_url);
  assert.match(gitUrl, new RegExp(`^git\\+ssh://git@[^/]+:${daemon.sshPort}/${webShop.id}\\.git$`));
  await page.getByText(webShop.domain, { exact: true }).waitFor();
  await page.getByText('No deployment yet').waitFor();
  await browser.screenshot('app-information-new');
});

uiTest(
  'environment variables: Add builds a pending list, "Update changes" saves it all at once, invalid names stay in the form',
  async () => {
    await page.getByRole('link', { name: 'Environment variables' }).click();
    await showing('web-shop: Environment variables');
    const name = page.getByLabel('Variable name');
    const value = page.getByLabel('Variable value');
    const summary = page.locator('.pending-summary');

    for (const bad of ['1BAD', 'my.prop', 'WITH SPACE']) {
      await name.fill(bad);
      await value.fill('x');
      await page.getByRole('button', { name: 'Add', exact: true }).click();
      await page.getByText(`Invalid variable name ${JSON.stringify(bad)}`).waitFor();
      assert.equal(await name.getAttribute('aria-invalid'), 'true');
      assert.equal(await summary.innerText(), 'No pending changes.');
    }
    await browser.screenshot('env-invalid-name');
    assert.deepEqual(await envOf(webShop.id), [], 'an invalid name saves nothing');

    await name.fill('GREETING');
    await value.fill('bonjour le monde');
    await name.press('Enter');
    await page.locator('tr[data-name="GREETING"][data-state="added"]').waitFor();
    assert.equal(await name.getAttribute('aria-invalid'), null, 'the error went away');
    await name.fill('DB_POOL');
    await value.fill('5');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.locator('tr[data-name="DB_POOL"][data-state="added"]').waitFor();
    assert.match(await summary.innerText(), /^2 pending changes/);
    assert.deepEqual(await envOf(webShop.id), [], 'Add alone saves nothing');
    await browser.screenshot('env-pending');

    await page.getByRole('button', { name: 'Update changes' }).click();
    await page.getByText('Saved 2 changes.').waitFor();
    assert.deepEqual(await envOf(webShop.id), [
      { name: 'DB_POOL', value: '5' },
      { name: 'GREETING', value: 'bonjour le monde' },
    ]);

    // A removal, a change and an addition, saved together.
    await page.getByRole('button', { name: 'Remove GREETING' }).click();
    await name.fill('DB_POOL');
    await value.fill('10');
    await value.press('Enter');
    await name.fill('NEW_ONE');
    await value.fill('');
    await value.press('Enter');
    assert.match(await summary.innerText(), /^3 pending changes/);
    await browser.screenshot('env-three-pending');
    assert.equal((await envOf(webShop.id)).length, 2, 'still the saved list');
    await page.getByRole('button', { name: 'Update changes' }).click();
    await page.getByText('Saved 3 changes.').waitFor();
    assert.deepEqual(await envOf(webShop.id), [
      { name: 'DB_POOL', value: '10' },
      { name: 'NEW_ONE', value: '' },
    ]);
    await browser.screenshot('env-saved');
  },
);

uiTest('environment variables: an error from the API is shown in the form and nothing is saved', async () => {
  await open(`#/apps/${webShop.id}/env`);
  await showing('web-shop: Environment variables');
  // Each value is within the 256 KiB limit, but together they exceed the API's 4 MiB body limit.
  const big = 'v'.repeat(250_000);
  for (let i = 0; i < 17; i++) {
    await page.getByLabel('Variable name').fill(`BIG_${i}`);
    await page.getByLabel('Variable value').fill(big);
    await page.getByLabel('Variable value').press('Enter');
  }
  assert.match(await page.locator('.pending-summary').innerText(), /^17 pending changes/);
  await page.getByRole('button', { name: 'Update changes' }).click();
  const alert = page.locator('.update-bar .form-error');
  await alert.waitFor();
  assert.match(await alert.innerText(), /Nothing was saved: Request body is larger than \d+ bytes/);
  assert.equal((await envOf(webShop.id)).length, 2, 'the saved list is untouched');
  await page.getByRole('button', { name: 'Discard changes' }).click();
  assert.equal(await page.locator('.pending-summary').innerText(), 'No pending changes.');
});

uiTest('environment variables of an sbt application also accept "-" and "."', async () => {
  const { app } = await api('POST', '/v1/apps', { type: 'sbt', name: 'billing', region: 'par', org: orgId });
  await open(`#/apps/${app.id}/env`);
  await showing('billing: Environment variables');
  await page.getByLabel('Variable name').fill('java.opts-extra');
  await page.getByLabel('Variable value').fill('-Xmx256m');
  await page.getByLabel('Variable value').press('Enter');
  await page.getByLabel('Variable name').fill('9lives');
  await page.getByLabel('Variable value').press('Enter');
  await page.getByText('Invalid variable name "9lives"').waitFor();
  await page.getByRole('button', { name: 'Update changes' }).click();
  await page.getByText('Saved 1 change.').waitFor();
  assert.deepEqual(await envOf(app.id), [{ name: 'java.opts-extra', value: '-Xmx256m' }]);
});

uiTest('add-on creation: provider and name, then the Applications screen links the toggled ones', async () => {
  apiBackendId = (await api('POST', '/v1/apps', { type: 'node', name: 'api-backend', region: 'par', org: orgId })).app.id;
  await open('#/');
  await showing('Organisations');
  await page.getByRole('link', { name: 'Add-ons' }).click();
  await showing('Add-ons of default');
  await page.getByText('No add-on yet.').waitFor();
  await page.getByRole('link', { name: 'Create an add-on' }).click();
  await showing('Create an add-on');

  const providers = await api<{ providers: Array<{ name: string }> }>('GET', '/v1/addon-providers');
  assert.ok(
    providers.providers.some((p) => p.name === 'redis'),
    JSON.stringify(providers),
  );
  // A name the API refuses brings the form back to the first step with the error beside the name.
  await page.getByLabel('Name', { exact: true }).fill('bad/name');
  await page.getByRole('button', { name: 'Next: Applications' }).click();
  await page.getByRole('button', { name: 'Create add-on' }).click();
  await page.getByText('Invalid add-on name "bad/name"').waitFor();
  assert.equal(await page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid'), 'true');
  assert.deepEqual((await api('GET', `/v1/addons?org=${orgId}`)).addons, [], 'nothing was created');

  // Radio buttons move with the arrow keys, as everywhere.
  await page.getByRole('radio', { name: /postgresql/ }).focus();
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.getByRole('radio', { name: /redis/ }).isChecked(), true);
  await page.getByLabel('Name', { exact: true }).fill('cache');
  await browser.screenshot('addon-create-provider');
  await page.getByLabel('Name', { exact: true }).press('Enter');
  await page.getByRole('heading', { name: 'Step 2 of 2: Applications' }).waitFor();
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Step 2 of 2: Applications', 'focus moves to the new step');

  const switches = page.getByRole('switch');
  assert.equal(await switches.count(), 3, 'one Link toggle per application of the organisation');
  for (const appName of ['web-shop', 'api-backend', 'billing']) await page.getByRole('switch', { name: `Link ${appName}` }).waitFor();
  await page.getByRole('switch', { name: 'Link web-shop' }).focus();
  await page.keyboard.press('Space');
  assert.equal(await page.getByRole('switch', { name: 'Link web-shop' }).isChecked(), true);
  await browser.screenshot('addon-create-applications');
  await page.getByRole('button', { name: 'Create add-on' }).click();
  await page.getByRole('heading', { level: 1, name: 'Add-ons of default' }).waitFor({ timeout: 120_000 });

  const { addons } = await api('GET', `/v1/addons?org=${orgId}`);
  assert.equal(addons.length, 1);
  assert.deepEqual([addons[0].name, addons[0].provider, addons[0].linked_apps], ['cache', 'redis', [webShop.id]]);
  const card = page.locator(`li[data-addon="${addons[0].id}"]`);
  await card.getByRole('link', { name: 'web-shop' }).waitFor();
  await browser.screenshot('addons');

  // The linked app's Environment variables page shows the add-on's variables as a second source.
  await open(`#/apps/${webShop.id}/env`);
  await page.getByRole('heading', { name: 'add-on cache (redis)' }).waitFor();
  await page.getByText('REDIS_URL', { exact: true }).waitFor();
  await browser.screenshot('env-with-addon');
});

uiTest('Service Dependencies: "Link add-ons" and "Link applications" dropdowns on one page, and unlink', async () => {
  await open(`#/apps/${apiBackendId}/services`);
  await showing('api-backend: Service dependencies');
  const addonForm = page.locator('form', { has: page.getByLabel('Link add-ons') });
  const appForm = page.locator('form', { has: page.getByLabel('Link applications') });
  await page.getByText('No add-on linked.').waitFor();

  await page.getByLabel('Link add-ons').selectOption({ label: 'cache (redis)' });
  await addonForm.getByRole('button', { name: 'Add' }).click();
  await page.getByRole('button', { name: 'Unlink add-on cache' }).waitFor();
  const afterAddon = await api('GET', `/v1/apps/${apiBackendId}/services`);
  assert.deepEqual(
    afterAddon.addons.map((a: { name: string }) => a.name),
    ['cache'],
  );

  await page.getByLabel('Link applications').focus();
  await page.getByLabel('Link applications').selectOption({ label: 'web-shop' });
  await appForm.getByRole('button', { name: 'Add' }).press('Enter');
  await page.getByRole('button', { name: 'Unlink application web-shop' }).waitFor();
  const afterApp = await api('GET', `/v1/apps/${apiBackendId}/services`);
  assert.deepEqual(afterApp.apps, [{ id: webShop.id, name: 'web-shop' }]);
  await browser.screenshot('services-linked');

  await page.getByRole('button', { name: 'Unlink application web-shop' }).click();
  await page.getByText('No application linked.').waitFor();
  assert.deepEqual((await api('GET', `/v1/apps/${apiBackendId}/services`)).apps, []);
  await page.getByRole('button', { name: 'Unlink add-on cache' }).click();
  await page.getByText('No add-on linked.').waitFor();
  assert.deepEqual((await api('GET', `/v1/apps/${apiBackendId}/services`)).addons, []);

  // Linking without a choice is refused in the form.
  await addonForm.getByRole('button', { name: 'Add' }).click();
  await page.getByText('Choose an add-on to link first.').waitFor();
});

uiTest('Domain names: add exact, wildcard and international names, refuse a non-host name in the form, favourite and remove', async () => {
  await open(`#/apps/${apiBackendId}/domains`);
  await showing('api-backend: Domain names');
  const name = page.getByLabel('Add a domain');
  await name.fill('https://shop.example.com/');
  await name.press('Enter');
  await page
    .getByRole('alert')
    .getByText(/":" cannot appear/)
    .waitFor();
  await name.fill('shop.example.com');
  await name.press('Enter');
  await page.locator('li[data-domain="shop.example.com"]').waitFor();
  await name.fill('*.example.net');
  await name.press('Enter');
  await page.locator('li[data-domain="*.example.net"]').waitFor();
  await name.fill('bücher.example.org');
  await name.press('Enter');
  await page.locator('li[data-domain="xn--bcher-kva.example.org"]').getByText('bücher.example.org').waitFor();
  assert.equal(
    await page.getByRole('button', { name: 'Make *.example.net the favourite domain' }).count(),
    0,
    'a wildcard is no address to show',
  );
  await page.getByRole('button', { name: 'Make shop.example.com the favourite domain' }).click();
  await page.locator('li[data-domain="shop.example.com"] .badge', { hasText: 'favourite' }).waitFor();
  const listing = await api<{ favourite: string; domains: Array<{ fqdn: string }> }>('GET', `/v1/apps/${apiBackendId}/domains`);
  assert.equal(listing.favourite, 'shop.example.com');
  assert.deepEqual(
    listing.domains.map((d) => d.fqdn),
    ['*.example.net', 'shop.example.com', 'xn--bcher-kva.example.org'],
  );
  await page.getByRole('button', { name: 'Remove domain bücher.example.org' }).click();
  await page.locator('li[data-domain="xn--bcher-kva.example.org"]').waitFor({ state: 'detached' });
  await browser.screenshot('app-domains');
});

uiTest('the Information page shows a deployment log live while it runs', { timeout: 900_000 }, async () => {
  const { gitEnv } = await registerSshKey(daemon);
  const dir = checkoutExample('node-hello');
  // The build waits (at most two minutes) until the test has seen its log live on the page:
  // a fast deployment could otherwise end before the page looked, and the test would race.
  const pkgPath = join(dir, 'package.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
  pkg.scripts.preinstall = 'echo waiting-for-the-test; i=0; while [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done';
  writeFileSync(pkgPath, JSON.stringify(pkg, null, 2));
  commitAll(dir, 'a build held open by the test');
  await open(`#/apps/${webShop.id}`);
  await showing('web-shop: Information');
  await page.getByText('No deployment yet').waitFor();

  const url = `git+ssh://git@127.0.0.1:${daemon.sshPort}/${webShop.id}.git`;
  const pushing = gitPush(dir, url, gitEnv);
  // The page notices the new deployment by itself and follows its log.
  const liveLine = page.locator('pre.log[data-live="true"] .line');
  await liveLine.first().waitFor({ timeout: 120_000 });
  assert.equal(await page.locator('.badge.live').isVisible(), true, 'the log is marked live');
  const deploymentId = await page.locator('pre.log').getAttribute('data-deployment');
  await browser.screenshot('app-information-deploying');
  // Seen live, the build waiting in its folder (its first line may come before the build starts): let it go on.
  await page.locator('pre.log .line', { hasText: 'waiting-for-the-test' }).first().waitFor({ timeout: 120_000 });
  writeFileSync(join(daemon.dataDir, 'apps', webShop.id, 'build', 'go'), '');

  const push = await pushing;
  assert.equal(push.code, 0, push.output);
  const end = page.locator('.log-end');
  await page.getByText(/^Deployment (OK|FAILED|CANCELLED)/).waitFor({ timeout: 840_000 });
  const pageLines = (await page.locator('pre.log .line').allInnerTexts()).map((l) => l.replace(/\n$/, ''));
  const response = await fetch(`${daemon.apiUrl}/v1/apps/${webShop.id}/deployments/${deploymentId}/logs`, {
    headers: { authorization: `Bearer ${daemon.adminToken}` },
  });
  const apiLines = (await response.text())
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { line?: string; end?: boolean })
    .filter((e) => !e.end)
    .map((e) => e.line);
  assert.match(await end.innerText(), /^Deployment OK/, pageLines.join('\n'));
  assert.deepEqual(pageLines, apiLines, 'the page shows every line of the log, in order, once');
  assert.equal(await page.locator('.badge.live').isVisible(), false, 'no longer marked live once it ended');
  await page.locator('li[data-state="OK"]').waitFor();
  await page.locator('.badge.state-running').waitFor({ timeout: 30_000 });
  await browser.screenshot('app-information-deployed');
});

uiTest("the Information page charts the app's requests of the last hour, from the same figures as the API", async () => {
  for (let i = 0; i < 3; i++) assert.equal((await getThroughRouter(daemon, `${webShop.id}.localhost`, `/charted-${i}`)).status, 200);
  // The router reports requests about a second late; the page reads the figures when it opens.
  const counted = async () =>
    (await api<{ minutes: Array<{ requests: number }> }>('GET', `/v1/apps/${webShop.id}/traffic`)).minutes.reduce(
      (n, m) => n + m.requests,
      0,
    );
  await waitUntil('the requests counted', async () => ((await counted()) >= 3 ? true : undefined), 30_000);
  const total = await counted();
  await open(`#/apps/${webShop.id}`);
  await showing('web-shop: Information');
  const requests = page.locator('figure[data-chart="requests"]');
  // The page redraws its charts every 10 s: it catches up with the API by itself.
  await page.waitForFunction(
    (n) => document.querySelector('figure[data-chart="requests"]')?.getAttribute('data-total') === String(n),
    total,
    { timeout: 30_000 },
  );
  assert.ok((await requests.locator('rect.chart-bar').count()) >= 1, 'a bar for the minute of the requests');
  assert.match(
    (await requests.locator('svg').getAttribute('aria-label')) ?? '',
    new RegExp(`Requests per minute, last hour: .*${total} in all`),
  );
  await page.locator('figure[data-chart="errors"]').waitFor();
  assert.ok(
    (await page.locator('figure[data-chart="p95"] polyline, figure[data-chart="p95"] circle').count()) >= 1,
    'the p95 latency is drawn',
  );
  await browser.screenshot('app-information-traffic');
});

uiTest('Back up now stores a backup the page then shows verified; a failed restore test is marked', { timeout: 600_000 }, async () => {
  const { addon } = await api('POST', '/v1/addons', { provider: 'postgresql', name: 'ledger', org: orgId, link: [] });
  await open(`#/orgs/${orgId}/addons`);
  await showing('Add-ons of default');
  const card = page.locator(`li[data-addon="${addon.id}"]`);
  await card.getByText('No backup yet.').waitFor();
  const backUp = card.getByRole('button', { name: 'Back up now: ledger' });
  await backUp.click();
  const stored = card.locator('.outcome[data-kind="ok"]');
  await stored.waitFor({ timeout: 300_000 });
  const id = (await stored.locator('code').innerText()).trim();
  assert.match(id, /^backup_[0-9a-z]+$/);
  assert.match(await stored.innerText(), /stored \(.*iB\); its restore test runs now/);
  // The list was read again after the answer, and follows the restore test by itself.
  const row = card.locator(`tbody[data-backup="${id}"]`);
  await row.waitFor({ timeout: 5_000 });
  assert.equal(await row.locator('td').nth(1).innerText(), 'manual');
  await card.locator(`tbody[data-backup="${id}"][data-verification="verified"]`).waitFor({ timeout: 300_000 });
  assert.match(await row.innerText(), /verified[\s\S]*pg_amcheck found no corruption/);
  assert.match(
    await card.locator('.backup-window').innerText(),
    /Restorable to any second from .* to now\. Daily backup at 03:00, kept 7 days\./,
  );
  assert.equal(await card.locator('.backup-failures').isVisible(), false);
  await browser.screenshot('addon-backups-verified');

  // A disk that lost the end of the base backup: its restore test now fails, and the page says so.
  // The add-on's server has base backups of its own: postgresql/<add-on id>/base/.
  const servers = join(`${daemon.dataDir}-backups`, 'postgresql');
  const folder = join(servers, readdirSync(servers).find((id) => existsSync(join(servers, id, 'base')))!, 'base');
  const [base] = readdirSync(folder).filter((name) => name.endsWith('.tar'));
  assert.ok(base, 'the base backup is in the backup folder');
  truncateSync(join(folder, base), Math.floor(statSync(join(folder, base)).size / 3));
  const verify = await daemon.cli(['addon', 'backup', 'verify', 'ledger', id], { timeoutMs: 300_000 });
  assert.notEqual(verify.code, 0, 'the damaged backup fails its restore test');
  const failed = card.locator(`table.backups tbody:first-of-type[data-backup="${id}"][data-verification="failed"]`);
  await failed.waitFor({ timeout: 30_000 });
  assert.match(
    await failed.innerText(),
    /failed[\s\S]*Restore test .*: backup object postgresql\/addon_[0-9a-f-]+\/base\/\S+ changed since it was stored/,
  );
  assert.equal(
    await failed.locator('th').evaluate((th) => getComputedStyle(th).borderLeftStyle),
    'solid',
    'the failed row is marked at its edge',
  );
  const alert = card.getByRole('alert');
  assert.match(await alert.innerText(), /^1 backup of ledger failed its restore test/);
  await browser.screenshot('addon-backups-failed');
});

uiTest(
  'an FS bucket shows its size used against its size, where each app mounts it, and its verified backups',
  { timeout: 300_000 },
  async () => {
    const { app } = await api('POST', '/v1/apps', { type: 'node', name: 'gallery', region: 'par', org: orgId });
    const { addon } = await api('POST', '/v1/addons', { provider: 'fs-bucket', name: 'media', org: orgId, plan: '32M', link: [app.id] });
    await api('PUT', `/v1/apps/${app.id}/env/CC_FS_BUCKET`, { value: `/public/media:${addon.bucket.host}` });
    await open(`#/orgs/${orgId}/addons`);
    await showing('Add-ons of default');
    const card = page.locator(`li[data-addon="${addon.id}"]`);
    await card.locator('.bucket-use meter').waitFor();
    const listed = (await api('GET', `/v1/addons?org=${orgId}`)).addons.find((a: { id: string }) => a.id === addon.id);
    assert.match(await card.locator('.bucket-use').innerText(), /^\S+ [KM]iB used of 32 MiB/);
    assert.equal(
      Number(await card.locator('.bucket-use meter').getAttribute('value')),
      listed.bucket.used_bytes,
      'the figure the API gives',
    );
    assert.equal((await card.locator('.bucket-mounts').innerText()).trim(), 'gallery sees it at /public/media');
    await card.getByRole('button', { name: 'Back up now: media' }).click();
    const stored = card.locator('.outcome[data-kind="ok"]');
    await stored.waitFor({ timeout: 120_000 });
    const id = (await stored.locator('code').innerText()).trim();
    const row = card.locator(`tbody[data-backup="${id}"][data-verification="verified"]`);
    await row.waitFor({ timeout: 120_000 });
    assert.match(
      await row.innerText(),
      /the image unpacked matches the SHA-256 taken at the snapshot; e2fsck -fn finds the filesystem clean/,
    );
    assert.match(await card.locator('.backup-window').innerText(), /Restorable to one of the backups below\./);
    await browser.screenshot('addon-fs-bucket');
  },
);

uiTest('every page is readable at 375px wide: nothing overflows horizontally', async () => {
  await page.setViewportSize({ width: 375, height: 812 });
  const pages: Array<[string, string, RegExp]> = [
    ['organisations', '#/', /^Organisations$/],
    ['create-app', `#/apps/new?org=${orgId}`, /^Create an application$/],
    ['app-information', `#/apps/${webShop.id}`, /Information$/],
    ['env', `#/apps/${webShop.id}/env`, /Environment variables$/],
    ['services', `#/apps/${webShop.id}/services`, /Service dependencies$/],
    ['domains', `#/apps/${webShop.id}/domains`, /Domain names$/],
    ['addons', `#/orgs/${orgId}/addons`, /^Add-ons of/],
    ['addon-create', `#/orgs/${orgId}/addons/new`, /^Create an add-on$/],
  ];
  for (const [name, hash, title] of pages) {
    await open(hash);
    await showing(title);
    await page.locator('main:not([aria-busy])').waitFor();
    assert.equal(await horizontalOverflow(page), 0, `${name} overflows horizontally at 375px`);
    await browser.screenshot(`narrow-${name}`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
});

uiTest('a script that fails to arrive is fetched again by reloading the page; one that never arrives is explained', async () => {
  const module = '**/console/js/console/browser/api.js';
  let tries = 0;
  await page.route(module, (route) => (tries++ === 0 ? route.abort('connectionreset') : route.continue()));
  try {
    await open('#/');
    await showing('Organisations');
    assert.equal(tries, 2, 'the module was asked for again after the first try failed');
  } finally {
    await page.unroute(module);
  }

  let refused = 0;
  await page.route(module, (route) => {
    refused++;
    return route.abort('connectionreset');
  });
  try {
    await gotoPage(page, 'about:blank');
    await gotoPage(page, `${daemon.apiUrl}/#/`);
    await page.getByText("The console's scripts could not be loaded").waitFor();
    assert.equal(refused, 3, 'the page was loaded three times, then gave up');
    assert.equal(await page.getByRole('heading', { level: 1 }).count(), 0);
  } finally {
    await page.unroute(module);
  }
  await open('#/');
  await showing('Organisations');
});

uiTest('sign out forgets the token; the console made no request beyond this machine', async () => {
  await open('#/');
  await showing('Organisations');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await showing('Sign in to slipway');
  assert.equal(await page.evaluate(() => sessionStorage.getItem('slipway.token')), null);

  assert.ok(browser.requests.length > 10, 'requests were recorded');
  assert.deepEqual(nonLoopback(browser.requests), []);
  const origins = new Set(browser.requests.filter((u) => !u.startsWith('about:')).map((u) => new URL(u).origin));
  assert.deepEqual([...origins], [daemon.apiUrl], 'every request went to the daemon itself');
});
