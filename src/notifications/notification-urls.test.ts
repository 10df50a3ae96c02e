import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EgressGuard } from '../network/egress-guard.js';
import { checkWebhookUrl, shownUrl } from './notification-urls.js';
import { checkEventNames, wants } from './event-names.js';
import { ValidationError } from '../core/errors.js';

const guard = new EgressGuard({ allow: ['127.0.0.0/8'], sandboxSubnets: ['10.77.0.0/16'], ownPorts: [{ port: 4040, what: 'API' }] });

test('webhook URLs: http(s) only, checked after resolution, passwords never shown', async () => {
  await assert.rejects(checkWebhookUrl('ftp://example.test/', guard), /must use http or https, not ftp/);
  await assert.rejects(checkWebhookUrl('not a url', guard), ValidationError);
  await assert.rejects(checkWebhookUrl('http://10.77.0.9/', guard), /sandboxes' subnet/);
  await assert.rejects(checkWebhookUrl('http://localhost:4040/', guard), /localhost resolves to .*(slipway's own API|loopback)/);
  await assert.rejects(
    checkWebhookUrl('http://169.254.169.254/latest/meta-data/', guard),
    /link-local .*--egress-allow 169\.254\.169\.254\/32/,
  );
  await assert.rejects(
    checkWebhookUrl('http://[::ffff:192.168.0.1]/', guard),
    /192\.168\.0\.1 is a private address; the operator can allow it/,
  );
  await assert.rejects(checkWebhookUrl('http://user:hunter2@10.77.0.9/', guard), (e: Error) => !e.message.includes('hunter2'));
  assert.equal(await checkWebhookUrl('http://127.0.0.1:9000/hook', guard), 'http://127.0.0.1:9000/hook');
  assert.equal(shownUrl('https://u:hunter2@example.test/x'), 'https://u:***@example.test/x');
});

test('event names: slipway’s own and the reference’s, none meaning all', () => {
  assert.deepEqual(checkEventNames(undefined), []);
  assert.deepEqual(checkEventNames(['DEPLOYMENT_FAIL', 'deployment.failed', 'cron.failed']), ['deployment.failed', 'cron.failed']);
  assert.throws(() => checkEventNames(['deployment.exploded']), /Unknown event "deployment.exploded"/);
  assert.equal(wants('[]', 'instance.crashed'), true);
  assert.equal(wants('["deployment.failed"]', 'instance.crashed'), false);
  assert.equal(wants('["deployment.failed"]', 'deployment.failed'), true);
});
