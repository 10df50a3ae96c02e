/**
 * Every route of a real daemon, asked with a token of each scope, answers as the table of
 * src/api/route-scopes.ts says: refused with 403 and what would do where the scope is too low,
 * let through otherwise. Then what a read token must never get, through the CLI and HTTP:
 * a backup's data, a one-off command, and the secret parts of drain and webhook URLs.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { startRemoteHost, type RemoteHost } from '../support/remote-host.js';
import { ROUTE_SCOPES, type RouteAccess } from '../../src/api/route-scopes.js';
import { scopeCovers, TOKEN_SCOPES, type TokenScope } from '../../src/store/api-tokens.js';

let daemon: TestDaemon;
// Drains and webhooks point at a test host of our own: nothing is sent anywhere else.
let receiver: RemoteHost;
const tokens = {} as Record<TokenScope, string>;
let app: string;

/** An unknown query parameter: the router checks it just after the scope, so no handler runs. */
const PROBE = 'scope_probe';

interface Answer {
  status: number;
  body: { error?: { message?: string; hint?: string | null } } & Record<string, unknown>;
}

async function call(method: string, path: string, token: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${daemon.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: Answer['body'] = {};
  try {
    parsed = JSON.parse(text) as Answer['body'];
  } catch {
    // /metrics answers text
  }
  return { status: response.status, body: parsed };
}

/** `slipway run`'s upgrade, answered by the server itself rather than the router. */
function upgradeRun(path: string, token: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${daemon.apiUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, connection: 'Upgrade', upgrade: 'slipway-run' },
    });
    req.once('upgrade', (_res, socket) => {
      socket.destroy();
      resolve({ status: 101, body: {} });
    });
    req.once('response', (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Answer['body'] }));
    });
    req.once('error', reject);
    req.end();
  });
}

before(async () => {
  // A /24 of its own (egress.test.ts takes 192.168.233.0/24).
  const n = 150 + Math.floor(Math.random() * 50);
  receiver = startRemoteHost({ name: `sc${n}`, address: `192.168.${n}.7`, hostSideAddress: `192.168.${n}.1` });
  daemon = await startDaemon(['--egress-allow', `192.168.${n}.0/24`]);
  for (const scope of TOKEN_SCOPES) {
    const created = await daemon.cli(['tokens', 'create', '--label', `probe-${scope}`, '--scope', scope, '--format', 'json']);
    assert.equal(created.code, 0, created.stderr);
    tokens[scope] = (JSON.parse(created.stdout) as { secret: string }).secret;
  }
  const created = await call('POST', '/v1/apps', tokens.full, { type: 'node', name: 'scoped', org: 'default' });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  app = (created.body.app as { id: string }).id;
});

after(async () => {
  await daemon?.stop();
  receiver?.close();
});

test('every route the daemon serves answers each scope as the table says', async () => {
  const openapi = await call('GET', '/v1/openapi.json', tokens.read);
  const served = Object.entries(openapi.body.paths as Record<string, Record<string, unknown>>).flatMap(([path, operations]) =>
    Object.keys(operations).map((method) => `${method.toUpperCase()} ${path.replace(/\{([A-Za-z_]+)\}/g, ':$1')}`),
  );
  assert.deepEqual([...served].sort(), Object.keys(ROUTE_SCOPES).sort(), 'the daemon serves exactly the routes of the table');

  const refusedFor: string[] = [];
  for (const [key, access] of Object.entries(ROUTE_SCOPES) as Array<[string, RouteAccess]>) {
    const [method, pattern] = key.split(' ') as [string, string];
    // Objects that do not exist: a route that lets the token through answers 400 or 404, never 403.
    const path = pattern.replace(/:([A-Za-z_]+)/g, (_m, name: string) => `no-such-${name}`);
    for (const scope of TOKEN_SCOPES) {
      const what = `${key} with a ${scope} token`;
      const allowed = access === 'public' || scopeCovers(scope, access);
      let answer: Answer;
      if (key === 'POST /v1/apps/:app/run') answer = await upgradeRun(`${path}?command=${encodeURIComponent('["true"]')}`, tokens[scope]);
      else if ((method === 'GET' && !path.startsWith('/v1/')) || access === 'public') answer = await call(method, path, tokens[scope]);
      else answer = await call(method, `${path}?${PROBE}=1`, tokens[scope]);
      if (!allowed) {
        assert.equal(answer.status, 403, `${what}: ${JSON.stringify(answer.body)}`);
        assert.match(
          answer.body.error?.message ?? '',
          new RegExp(`has the scope "${scope}", which does not allow this .*: it needs "${access}"`),
          what,
        );
        assert.match(answer.body.error?.hint ?? '', new RegExp(`slipway tokens create --scope ${access}`), what);
        refusedFor.push(scope);
        continue;
      }
      assert.notEqual(answer.status, 403, `${what} is let through: ${JSON.stringify(answer.body)}`);
      assert.ok([200, 400, 404].includes(answer.status), `${what}: ${answer.status} ${JSON.stringify(answer.body)}`);
      // A route behind the router got past its scope check to the next one: the probe's parameter.
      if (answer.status === 400) assert.match(answer.body.error?.message ?? '', new RegExp(`Unknown query parameter "${PROBE}"`), what);
    }
  }
  // The walk refused something at each scope below full (it can fail).
  assert.ok(refusedFor.includes('read') && refusedFor.includes('deploy') && !refusedFor.includes('full'));
});

test('a read token downloads no backup and runs no command; the CLI says which scope would', async () => {
  const output = join(daemon.dataDir, 'dump.out');
  const download = await daemon.cli(['addon', 'backup', 'download', 'any-addon', 'backup_x', '--output', output], { token: tokens.read });
  assert.equal(download.code, 1);
  assert.match(download.stderr, /Error: This API token has the scope "read", which does not allow this .*: it needs "full"\./);
  assert.match(download.stderr, /Hint: Use a token of scope full: `slipway tokens create --scope full`/);
  assert.ok(!existsSync(output), 'nothing was written');

  const run = await daemon.cli(['run', '--app', app, '--', 'true'], { token: tokens.read });
  assert.equal(run.code, 1);
  assert.match(run.stderr, /scope "read", which does not allow this .*: it needs "full"/);
  assert.match(run.stderr, /slipway tokens create --scope full/);
});

test('drain and webhook URLs reach read and deploy tokens with their secrets hidden', async () => {
  const drainUrl = `http://${receiver.address}:9/in/drainKEY42?token=drainQUERY`;
  const drain = await call('POST', `/v1/apps/${app}/drains`, tokens.full, {
    type: 'HTTP',
    url: drainUrl,
    username: 'drainUSER',
    password: 'drainPASS',
  });
  assert.equal(drain.status, 201, JSON.stringify(drain.body));
  const drainId = (drain.body.drain as { id: string }).id;
  // Keep the daemon from sending anything there while the test runs.
  assert.equal((await call('DELETE', `/v1/apps/${app}/drains/${drainId}/enabled`, tokens.full)).status, 200);
  const hookUrl = `http://${receiver.address}:9/hooks/hookKEY42?sig=hookQUERY`;
  const hook = await call('POST', `/v1/apps/${app}/webhooks`, tokens.full, { name: 'ci', url: hookUrl });
  assert.equal(hook.status, 201, JSON.stringify(hook.body));

  const full = {
    drains: await call('GET', `/v1/apps/${app}/drains`, tokens.full),
    webhooks: await call('GET', `/v1/apps/${app}/webhooks`, tokens.full),
  };
  // Positive control: the full token sees where they go, so the checks below can fail.
  assert.deepEqual(
    (full.drains.body.drains as Array<{ url: string; username: string }>).map((d) => [d.url, d.username]),
    [[drainUrl, 'drainUSER']],
  );
  assert.deepEqual(
    (full.webhooks.body.webhooks as Array<{ url: string }>).map((w) => w.url),
    [hookUrl],
  );

  for (const scope of ['read', 'deploy'] as const) {
    const drains = await call('GET', `/v1/apps/${app}/drains`, tokens[scope]);
    const webhooks = await call('GET', `/v1/apps/${app}/webhooks`, tokens[scope]);
    assert.equal(drains.status, 200);
    assert.equal(webhooks.status, 200);
    assert.deepEqual(
      (drains.body.drains as Array<{ url: string; username: string }>).map((d) => [d.url, d.username]),
      [[`http://${receiver.address}:9/***?***`, '***']],
      scope,
    );
    assert.deepEqual(
      (webhooks.body.webhooks as Array<{ url: string }>).map((w) => w.url),
      [`http://${receiver.address}:9/***?***`],
      scope,
    );
    const listed = await daemon.cli(['drain', '--app', app], { token: tokens[scope] });
    assert.equal(listed.code, 0, listed.stderr);
    assert.doesNotMatch(JSON.stringify([drains.body, webhooks.body]) + listed.stdout, /KEY42|QUERY|drainUSER|drainPASS/, scope);
  }
});
