import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Store } from '../store/store.js';
import { PlatformEvents } from './platform-event-hub.js';
import type { MailSender } from './mail-sender.js';
import { type DispatcherOptions, NotificationDispatcher } from './dispatcher.js';
import { waitUntil } from '../../test/support/wait.js';

/**
 * The real dispatcher and store, with a mail sender standing in for SMTP: mail to the slow
 * organisation's address never gets an answer (as a tarpit would), the rest is sent at once.
 * Webhook and e-mail deliveries share the same slots, so this is the scheduling both get.
 */
test("one organisation's receiver that never answers does not delay another organisation's deliveries", async () => {
  const store = Store.open(':memory:');
  const events = new PlatformEvents();
  const hanging: Array<() => void> = [];
  const sent: string[] = [];
  const mail = {
    send: (to: string[]) => {
      if (to.includes('ops@slow.example')) {
        return new Promise((resolve) => hanging.push(() => resolve({ ok: false, statusCode: null, error: 'timed out' })));
      }
      sent.push(to.join(','));
      return Promise.resolve({ ok: true, statusCode: null, error: null });
    },
    close: () => undefined,
  } as unknown as MailSender;
  const appOf = (orgName: string, address: string) => {
    const org = store.orgs.create(orgName);
    const app = store.apps.create({ orgId: org.id, name: `${orgName}-app`, type: 'node', region: 'par' });
    store.notifyEmails.add({ appId: app.id, name: 'ops', targets: [address], events: ['cron.failed'] });
    return app;
  };
  const slow = appOf('slow', 'ops@slow.example');
  const quick = appOf('quick', 'ops@quick.example');
  const dispatcher = new NotificationDispatcher({
    store,
    events,
    // Mail only: no webhook, so no address is ever checked.
    guard: undefined as unknown as DispatcherOptions['guard'],
    mail,
    log: () => undefined,
    retryDelaysMs: [60_000],
    limits: { perKey: 2, total: 4 },
  });
  dispatcher.start();
  try {
    // More than every slot's worth of the slow organisation's deliveries, first.
    for (let i = 0; i < 8; i++) events.publish({ type: 'cron.failed', appId: slow.id, summary: `slow ${i}`, details: {} });
    await waitUntil('the slow organisation to fill its two slots', () => hanging.length === 2, 5000);
    events.publish({ type: 'cron.failed', appId: quick.id, summary: 'quick', details: {} });
    await waitUntil('the quick delivery', () => sent.length === 1, 5000);
    assert.deepEqual(sent, ['ops@quick.example']);
    assert.equal(hanging.length, 2, 'the slow organisation holds its own two slots, no more');
    // Its next delivery starts once one of its own ends.
    hanging.shift()!();
    await waitUntil('the next slow delivery', () => hanging.length === 2, 5000);
  } finally {
    for (const end of hanging.splice(0)) end();
    await dispatcher.stop();
    store.close();
  }
});
