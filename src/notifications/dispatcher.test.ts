import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHmac } from 'node:crypto';
import { Store } from '../store/store.js';
import { PlatformEvents } from './platform-event-hub.js';
import { NotificationDispatcher } from './dispatcher.js';
import { EgressGuard } from '../network/egress-guard.js';
import { waitUntil } from '../../test/support/wait.js';

/** A synthetic event (a cron run failing) through the real dispatcher to a real HTTP receiver on loopback. */
test('an event is delivered signed, retried after errors with backoff, and given up after the bounded attempts', async () => {
  const answers: number[] = [];
  let plan: number[] = [];
  const bodies: Array<{ path: string; body: string; signature: string; timestamp: string }> = [];
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const status = plan.shift() ?? 200;
      answers.push(status);
      bodies.push({
        path: req.url!,
        body,
        signature: String(req.headers['x-slipway-signature']),
        timestamp: String(req.headers['x-slipway-timestamp']),
      });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const port = (receiver.address() as AddressInfo).port;
  const store = Store.open(join(mkdtempSync(join(tmpdir(), 'slipway-notify-')), 'slipway.db'));
  const org = store.orgs.create('acme');
  const app = store.apps.create({ orgId: org.id, name: 'shop', type: 'node', region: 'par' });
  const events = new PlatformEvents();
  const logged: string[] = [];
  const dispatcher = new NotificationDispatcher({
    store,
    events,
    guard: new EgressGuard({ allow: ['127.0.0.0/8', '::1/128'], sandboxSubnets: ['10.77.0.0/16'], ownPorts: [] }),
    log: (line) => logged.push(line),
    retryDelaysMs: [30, 60],
  });
  dispatcher.start();
  try {
    const ok = store.webhooks.add({
      appId: app.id,
      name: 'ok',
      url: `http://127.0.0.1:${port}/ok`,
      format: 'raw',
      events: ['cron.failed'],
      secret: 's1',
    });
    store.webhooks.add({
      appId: app.id,
      name: 'other',
      url: `http://127.0.0.1:${port}/other`,
      format: 'raw',
      events: ['cron.missed'],
      secret: 's2',
    });

    // 500, then 200: delivered at the second attempt.
    plan = [500, 200];
    const started = Date.now();
    let returned = false;
    events.publish({ type: 'cron.failed', appId: app.id, summary: 'Job 1 of shop exited with 3', details: { exit_code: 3 } });
    returned = true;
    assert.ok(returned && bodies.length === 0, 'publishing returns before anything is sent');
    const [delivery] = await waitUntil(
      'delivered',
      () => {
        const rows = store.notificationDeliveries.ofWebhook(ok.id, 5);
        return rows[0]?.state === 'delivered' ? rows : undefined;
      },
      10_000,
    );
    assert.ok(Date.now() - started >= 30, 'the retry waited');
    assert.deepEqual(
      store.notificationDeliveries.attemptsOf(delivery!.id).map((a) => [a.attempt, a.ok, a.status_code]),
      [
        [1, 0, 500],
        [2, 1, 200],
      ],
    );
    assert.deepEqual(answers, [500, 200]);
    const last = bodies.at(-1)!;
    assert.equal(last.path, '/ok', 'the webhook listening to cron.missed heard nothing');
    assert.equal(last.signature, `sha256=${createHmac('sha256', 's1').update(`${last.timestamp}.${last.body}`).digest('hex')}`);
    assert.deepEqual(JSON.parse(last.body).details, { exit_code: 3 });

    // Always 503: three attempts (one and two retries), then failed for good.
    plan = [503, 503, 503, 503];
    events.publish({ type: 'cron.failed', appId: app.id, summary: 'Job 1 of shop exited with 4', details: { exit_code: 4 } });
    const failed = await waitUntil(
      'failed',
      () => {
        const row = store.notificationDeliveries.ofWebhook(ok.id, 5)[0];
        return row && row.id !== delivery!.id && row.state === 'failed' ? row : undefined;
      },
      10_000,
    );
    assert.equal(failed.attempts, 3);
    assert.equal(failed.next_attempt_at, null);
    assert.deepEqual(answers.slice(2), [503, 503, 503]);

    // A receiver that refuses connections is a failed attempt too, never an error of the daemon.
    store.webhooks.add({ appId: app.id, name: 'gone', url: 'http://127.0.0.1:1/', format: 'slack', events: [], secret: 's3' });
    events.publish({ type: 'drain.dropping', appId: app.id, summary: 'Drain d of shop dropped 10 lines', details: {} });
    const gone = store.webhooks.byName(app.id, 'gone')!;
    const refused = await waitUntil(
      'refused attempts',
      () => {
        const row = store.notificationDeliveries.ofWebhook(gone.id, 1)[0];
        return row?.state === 'failed' ? row : undefined;
      },
      10_000,
    );
    assert.match(store.notificationDeliveries.attemptsOf(refused.id)[0]!.error!, /ECONNREFUSED/);
    assert.deepEqual(logged, []);
  } finally {
    await dispatcher.stop();
    receiver.close();
    store.close();
  }
});
