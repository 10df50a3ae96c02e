import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONSOLE_ENTRY, consoleFileFor, consoleHandler, defaultConsoleFiles } from './serve.js';

let server: Server;
let base: string;
const root = mkdtempSync(join(tmpdir(), 'slipway-console-'));
const files = { staticDir: join(root, 'static'), scriptsDir: join(root, 'scripts') };

before(async () => {
  mkdirSync(join(files.scriptsDir, 'console', 'browser'), { recursive: true });
  mkdirSync(files.staticDir);
  writeFileSync(join(files.staticDir, 'index.html'), '<!doctype html><title>t</title>');
  writeFileSync(join(files.staticDir, 'style.css'), 'body{}');
  writeFileSync(join(files.scriptsDir, 'console', 'browser', 'main.js'), 'export {};');
  writeFileSync(join(root, 'secret.js'), 'outside');
  const handle = consoleHandler(files);
  server = createServer((req, res) => {
    if (!handle(req, res)) {
      res.writeHead(599);
      res.end('declined');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => new Promise<void>((resolve) => server.close(() => resolve())));

test('serves the page, its stylesheet and its modules with a same-origin-only policy', async () => {
  const page = await fetch(`${base}/`);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type')!, /^text\/html/);
  const csp = page.headers.get('content-security-policy')!;
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self'/);
  assert.match(csp, /connect-src 'self'/);
  assert.doesNotMatch(csp, /unsafe-inline|https?:/);
  assert.equal(page.headers.get('x-content-type-options'), 'nosniff');

  const css = await fetch(`${base}/console/style.css`);
  assert.equal(css.status, 200);
  assert.match(css.headers.get('content-type')!, /^text\/css/);

  const js = await fetch(`${base}${CONSOLE_ENTRY}`);
  assert.equal(js.status, 200);
  assert.match(js.headers.get('content-type')!, /^text\/javascript/);
  assert.equal(await js.text(), 'export {};');
});

test('declines what is not the console: API paths, other methods, unknown files', async () => {
  assert.equal((await fetch(`${base}/v1/apps`)).status, 599);
  assert.equal((await fetch(`${base}/`, { method: 'POST', body: '{}' })).status, 599);
  assert.equal((await fetch(`${base}/console/other.txt`)).status, 599);
  const missing = await fetch(`${base}/console/js/console/browser/nothing.js`);
  assert.equal(missing.status, 404);
  assert.match(await missing.text(), /npm run build/);
});

test('never serves a file outside the scripts folder', () => {
  assert.equal(consoleFileFor(files, '/console/js/../secret.js'), undefined);
  assert.equal(consoleFileFor(files, '/console/js/%2e%2e/secret.js'), undefined);
  assert.equal(consoleFileFor(files, '/console/js/..%2fsecret.js'), undefined);
  assert.equal(consoleFileFor(files, '/console/js/%2Fetc%2Fpasswd.js'), undefined);
  assert.equal(consoleFileFor(files, '/console/js/%E0%A4%A.js'), undefined);
  assert.equal(consoleFileFor(files, '/console/js/console/browser/main.js'), join(files.scriptsDir, 'console', 'browser', 'main.js'));
  assert.equal(consoleFileFor(files, '/console/boot.js'), join(files.staticDir, 'boot.js'));
});

test('the default files are the ones in this repository', () => {
  const defaults = defaultConsoleFiles();
  assert.ok(existsSync(join(defaults.staticDir, 'index.html')), defaults.staticDir);
  assert.ok(existsSync(join(defaults.staticDir, 'style.css')));
  const page = readFileSync(join(defaults.staticDir, 'index.html'), 'utf8');
  const boot = readFileSync(join(defaults.staticDir, 'boot.js'), 'utf8');
  assert.match(page, /<script src="\/console\/boot\.js"><\/script>/, 'the page loads its modules through the boot script');
  assert.ok(boot.includes(`'${CONSOLE_ENTRY}'`), 'the boot script loads the entry module');
  assert.match(defaults.scriptsDir, /dist\/console$/);
});
