import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { healthCheckPaths } from './health-check-paths.js';
import { runHealthCheck } from './health-check.js';
import { PlanError } from '../core/errors.js';

test('paths: default /, the single variable, numbered ones in order of n', () => {
  assert.deepEqual(healthCheckPaths({}), ['/']);
  assert.deepEqual(healthCheckPaths({ CC_HEALTH_CHECK_PATH: '/health' }), ['/health']);
  assert.deepEqual(
    healthCheckPaths({ CC_HEALTH_CHECK_PATH_10: '/c', CC_HEALTH_CHECK_PATH_0: '/a', CC_HEALTH_CHECK_PATH_2: '/b', APP_HOME: '/x' }),
    ['/a', '/b', '/c'],
  );
  assert.deepEqual(healthCheckPaths({ CC_HEALTH_CHECK_PATH: '/h', CC_HEALTH_CHECK_PATH_0: '/db' }), ['/h', '/db']);
  assert.throws(() => healthCheckPaths({ CC_HEALTH_CHECK_PATH: 'health' }), PlanError);
});

async function serve(handler: (path: string) => number): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    res.statusCode = handler(req.url ?? '/');
    res.end('x');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { server, port: (server.address() as { port: number }).port };
}

test('every path answering 200 passes and logs one line per path', async () => {
  const { server, port } = await serve(() => 200);
  const lines: string[] = [];
  const outcome = await runHealthCheck({
    address: '127.0.0.1',
    port,
    paths: ['/', '/db'],
    bootDeadlineMs: 5000,
    log: (l) => lines.push(l),
  });
  server.close();
  assert.equal(outcome.ok, true);
  assert.deepEqual(lines, ['Response from GET / is 200', 'Response from GET /db is 200']);
});

test('a path answering something other than 200 fails with the documented lines', async () => {
  const { server, port } = await serve((path) => (path === '/db' ? 503 : 200));
  const lines: string[] = [];
  const outcome = await runHealthCheck({
    address: '127.0.0.1',
    port,
    paths: ['/', '/db'],
    bootDeadlineMs: 5000,
    settleMs: 300,
    log: (l) => lines.push(l),
  });
  server.close();
  assert.equal(outcome.ok, false);
  assert.deepEqual(lines.slice(0, 4), [
    'Response from GET / is 200',
    'Response from GET /db is 503',
    'Health check failed:',
    '- GET /db returned 503.',
  ]);
  assert.match(lines[4]!, /Update the health check configuration/);
});

test('a 301 is not 200', async () => {
  const { server, port } = await serve(() => 301);
  const lines: string[] = [];
  const outcome = await runHealthCheck({
    address: '127.0.0.1',
    port,
    paths: ['/'],
    bootDeadlineMs: 5000,
    settleMs: 200,
    log: (l) => lines.push(l),
  });
  server.close();
  assert.equal(outcome.ok, false);
  assert.ok(lines.includes('- GET / returned 301.'));
});

test('an app that never listens fails at the boot deadline', async () => {
  const { server, port } = await serve(() => 200);
  await new Promise((resolve) => server.close(resolve));
  const lines: string[] = [];
  const outcome = await runHealthCheck({ address: '127.0.0.1', port, paths: ['/'], bootDeadlineMs: 600, log: (l) => lines.push(l) });
  assert.equal(outcome.ok, false);
  assert.match(outcome.reason!, /did not answer on port/);
  assert.ok(lines.includes('Health check failed:'));
});
