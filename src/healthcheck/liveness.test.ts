import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { LIVENESS_DEFAULTS, livenessSettings } from './liveness-settings.js';
import { describeLivenessFailure, probeLiveness } from './liveness-probe.js';
import { checkHealthCheckVariable } from './health-check-paths.js';
import { PlanError, ValidationError } from '../core/errors.js';

test('liveness settings: defaults, each variable, off', () => {
  assert.deepEqual(livenessSettings({}), LIVENESS_DEFAULTS);
  assert.deepEqual(
    livenessSettings({ SLIPWAY_LIVENESS_INTERVAL: '1.5', SLIPWAY_LIVENESS_TIMEOUT: '0.2', SLIPWAY_LIVENESS_FAILURES: '5' }),
    {
      enabled: true,
      intervalMs: 1500,
      timeoutMs: 200,
      failures: 5,
    },
  );
  assert.equal(livenessSettings({ SLIPWAY_LIVENESS: 'off' }).enabled, false);
  assert.equal(livenessSettings({ SLIPWAY_LIVENESS: 'ON' }).enabled, true);
  assert.deepEqual(livenessSettings({ SLIPWAY_LIVENESS_INTERVAL: ' ' }), LIVENESS_DEFAULTS, 'an empty value is the default');
});

test('a malformed liveness setting is refused at deploy and at env set, naming the variable and an example', () => {
  for (const [name, value] of [
    ['SLIPWAY_LIVENESS', 'no'],
    ['SLIPWAY_LIVENESS_INTERVAL', '10s'],
    ['SLIPWAY_LIVENESS_INTERVAL', '0.1'],
    ['SLIPWAY_LIVENESS_TIMEOUT', '-1'],
    ['SLIPWAY_LIVENESS_FAILURES', '2.5'],
    ['SLIPWAY_LIVENESS_FAILURES', '0'],
  ] as const) {
    assert.throws(
      () => livenessSettings({ [name]: value }),
      (e: unknown) => e instanceof PlanError && e.message.startsWith(`${name} is `) && e.message.includes(JSON.stringify(value)),
      `${name}=${value}`,
    );
    assert.throws(
      () => checkHealthCheckVariable(name, value),
      (e: unknown) => e instanceof ValidationError && /nothing was changed/.test(e.message) && /slipway env set/.test(e.hint ?? ''),
    );
  }
  checkHealthCheckVariable('SLIPWAY_LIVENESS_INTERVAL', '2');
  checkHealthCheckVariable('OTHER', 'anything');
});

test('a liveness probe: 200 on every path passes, another status or silence beyond the timeout fails', async () => {
  const server = createServer((req, res) => {
    if (req.url === '/hang') return; // never answers
    res.statusCode = req.url === '/db' ? 503 : 200;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  try {
    assert.equal(await probeLiveness('127.0.0.1', port, ['/', '/ok'], 1000), undefined);
    const bad = await probeLiveness('127.0.0.1', port, ['/', '/db'], 1000);
    assert.equal(describeLivenessFailure(bad!, 1000), 'answered GET /db with 503');
    const started = Date.now();
    const silent = await probeLiveness('127.0.0.1', port, ['/hang'], 200);
    assert.ok(Date.now() - started < 2000, 'the timeout bounds the check');
    assert.equal(describeLivenessFailure(silent!, 200), 'did not answer GET /hang within 0.2 s');
    assert.equal(describeLivenessFailure(silent!), 'did not answer GET /hang');
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
