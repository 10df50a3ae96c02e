import { test } from 'node:test';
import assert from 'node:assert/strict';
import { refusalOf, type AddressGuard } from './address-guard.js';
import { checkWebhookUrl, shownUrl } from './notification-urls.js';
import { checkEventNames, wants } from './event-names.js';
import { ValidationError } from '../core/errors.js';

const guard: AddressGuard = { subnets: ['10.77.0.0/16'], ownPorts: [{ port: 4040, what: 'API' }] };

test('the sandboxes, link-local addresses and slipway’s own ports are refused; other receivers are not', () => {
  assert.match(refusalOf('10.77.0.1', 5432, guard)!, /sandboxes' subnet 10\.77\.0\.0\/16/);
  assert.match(refusalOf('10.77.255.254', 80, guard)!, /sandboxes' subnet/);
  assert.match(refusalOf('::ffff:10.77.3.4', 80, guard)!, /sandboxes' subnet/);
  assert.match(refusalOf('169.254.169.254', 80, guard)!, /link-local/);
  assert.match(refusalOf('fe80::1', 80, guard)!, /link-local/);
  assert.match(refusalOf('127.0.0.1', 4040, guard)!, /slipway's own API/);
  assert.match(refusalOf('127.1.2.3', 4040, guard)!, /slipway's own API/);
  assert.match(refusalOf('::1', 4040, guard)!, /slipway's own API/);
  assert.equal(refusalOf('10.78.0.1', 80, guard), undefined);
  assert.equal(refusalOf('10.76.255.255', 80, guard), undefined);
  assert.equal(refusalOf('127.0.0.1', 9000, guard), undefined);
  assert.equal(refusalOf('203.0.113.7', 4040, guard), undefined, 'port 4040 elsewhere is someone else’s');
});

test('webhook URLs: http(s) only, checked after resolution, passwords never shown', async () => {
  await assert.rejects(checkWebhookUrl('ftp://example.test/', guard), /must use http or https, not ftp/);
  await assert.rejects(checkWebhookUrl('not a url', guard), ValidationError);
  await assert.rejects(checkWebhookUrl('http://10.77.0.9/', guard), /sandboxes' subnet/);
  await assert.rejects(checkWebhookUrl('http://localhost:4040/', guard), /localhost resolves to .*slipway's own API/);
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
