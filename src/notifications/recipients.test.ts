import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../store/store.js';
import type { PlatformEvent } from '../core/platform-events.js';
import { PlatformEvents } from './platform-event-hub.js';
import { recipientsOf } from './recipients.js';
import { NotificationDispatcher } from './dispatcher.js';
import { EgressGuard } from '../network/egress-guard.js';

function fixture() {
  const store = Store.open(join(mkdtempSync(join(tmpdir(), 'slipway-recipients-')), 'slipway.db'));
  const org = store.orgs.create('acme');
  const app = store.apps.create({ orgId: org.id, name: 'shop', type: 'node', region: 'par' });
  const ann = store.users.create('ann');
  const bob = store.users.create('bob');
  const eve = store.users.create('eve');
  const outsider = store.users.create('outsider');
  for (const user of [ann, bob, eve]) store.orgs.addMember(org.id, user.id, 'member');
  store.notifyEmails.setAddress(ann.id, 'ann@example.test');
  store.notifyEmails.setAddress(bob.id, 'bob@example.test');
  store.notifyEmails.setAddress(outsider.id, 'outsider@example.test');
  return { store, org, app, ann, bob, eve };
}

const event = (details: PlatformEvent['details']): PlatformEvent => ({
  type: 'deployment.failed',
  appId: 'app',
  at: new Date().toISOString(),
  summary: 's',
  details,
});

test('user is whoever caused the event, ORGANISATION every member with an address, addresses as given', () => {
  const { store, org, ann, bob } = fixture();
  assert.deepEqual(recipientsOf(store, ['user'], event({ user_id: bob.id }), org.id), ['bob@example.test']);
  assert.deepEqual(recipientsOf(store, ['user'], event({}), org.id), [], 'an event nobody caused mails nobody');
  assert.deepEqual(recipientsOf(store, ['ORGANISATION'], event({}), org.id).sort(), ['ann@example.test', 'bob@example.test']);
  assert.deepEqual(recipientsOf(store, ['ops@example.test', ann.id, 'bob', 'user'], event({ user_id: ann.id }), org.id), [
    'ops@example.test',
    'ann@example.test',
    'bob@example.test',
  ]);
  store.close();
});

test('a crash loop sends one instance.crashed per receiver per minute; other events are all sent', async () => {
  const { store, app } = fixture();
  const events = new PlatformEvents();
  // The receiver is refused at once (port 1), which keeps the test on this machine; only enqueuing is checked.
  const hook = store.webhooks.add({ appId: app.id, name: 'h', url: 'http://127.0.0.1:1/', format: 'raw', events: [], secret: 's' });
  const dispatcher = new NotificationDispatcher({
    store,
    events,
    guard: new EgressGuard({ allow: ['127.0.0.0/8', '::1/128'], sandboxSubnets: [], ownPorts: [] }),
    log: () => undefined,
    retryDelaysMs: [],
  });
  dispatcher.start();
  try {
    for (let i = 0; i < 3; i++) {
      events.publish({ type: 'instance.crashed', appId: app.id, summary: `crash ${i}`, details: {} });
      events.publish({ type: 'deployment.failed', appId: app.id, summary: `failed ${i}`, details: {} });
    }
    // Events are queued in the order published: once the last deployment.failed is in, every crash was considered.
    const deadline = Date.now() + 5_000;
    let deliveries = store.notificationDeliveries.ofWebhook(hook.id, 50);
    while (deliveries.filter((d) => d.event_type === 'deployment.failed').length < 3) {
      assert.ok(Date.now() < deadline, 'the deliveries were queued');
      await new Promise((r) => setTimeout(r, 10));
      deliveries = store.notificationDeliveries.ofWebhook(hook.id, 50);
    }
    const types = deliveries.map((d) => d.event_type).sort();
    assert.deepEqual(types, ['deployment.failed', 'deployment.failed', 'deployment.failed', 'instance.crashed']);
  } finally {
    await dispatcher.stop();
    store.close();
  }
});
