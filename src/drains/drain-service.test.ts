import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PlatformEvent } from '../core/platform-events.js';
import { PlatformEvents } from '../notifications/platform-event-hub.js';
import { LogHub } from '../logs/log-hub.js';
import { Store } from '../store/store.js';
import { DrainService } from './drain-service.js';
import { EgressGuard } from '../network/egress-guard.js';
import { waitUntil } from '../../test/support/wait.js';

const MiB = 1024 * 1024;

test('a receiver answering errors is retried without holding the log; a full buffer is told once per period', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'drain-service-'));
  const store = Store.open(join(dir, 'store.db'));
  const org = store.orgs.create('acme');
  const app = store.apps.create({ orgId: org.id, name: 'shop', type: 'node', region: 'par' });
  // Room for the whole burst in the log's own queue: only the drain's buffer bounds what is kept here.
  const logs = new LogHub(join(dir, 'logs'), { maxQueuedChars: 64 * MiB });
  const events = new PlatformEvents();
  const told: PlatformEvent[] = [];
  events.subscribe((event) => told.push(event));
  let failing = true;
  let attempts = 0;
  const received: string[] = [];
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      attempts++;
      if (failing) {
        res.statusCode = 503;
        return res.end();
      }
      for (const line of body.split('\n').filter(Boolean)) received.push((JSON.parse(line) as { message: string }).message);
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const service = new DrainService({
    store,
    dir: join(dir, 'drains'),
    bufferBytes: MiB,
    appLogs: logs,
    events,
    forbidden: new EgressGuard({ allow: ['127.0.0.0/8', '::1/128'], sandboxSubnets: [], ownPorts: [] }),
    log: () => {},
  });
  service.start();
  try {
    const drain = store.drains.add({
      app_id: app.id,
      type: 'HTTP',
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`,
      username: null,
      password: null,
      with_access_logs: 0,
    });
    // Appending never waits for the receiver: 30,000 lines go in at once while it answers 503.
    const started = performance.now();
    for (let i = 1; i <= 30_000; i++) logs.append(app.id, 'out', `line ${String(i).padStart(6, '0')} ${'x'.repeat(40)}`);
    assert.ok(performance.now() - started < 5_000, 'appending did not wait');
    await waitUntil('the drain failing', () => service.status(drain.id)!.state === 'failing', 20_000);
    assert.ok(attempts >= 1, 'the receiver was asked');
    const status = service.status(drain.id)!;
    assert.match(status.last_error ?? '', /answered 503/);
    assert.ok(status.dropped > 0, 'the 1 MiB buffer overflowed');
    const dropping = told.filter((e) => e.type === 'drain.dropping');
    assert.equal(dropping.length, 1, 'told once, not per line or per segment');
    assert.equal(dropping[0]!.appId, app.id);
    assert.equal(dropping[0]!.details.drain_id, drain.id);
    assert.match(dropping[0]!.summary, /dropping lines/);
    // More lines dropped within the period: no second event.
    for (let i = 30_001; i <= 40_000; i++) logs.append(app.id, 'out', `line ${String(i).padStart(6, '0')} ${'x'.repeat(40)}`);
    await waitUntil('more lines dropped', () => service.status(drain.id)!.dropped > status.dropped, 20_000);
    assert.equal(told.filter((e) => e.type === 'drain.dropping').length, 1);
    // The receiver recovers: what was kept arrives, the newest lines, in order.
    failing = false;
    await waitUntil('the buffer emptied', () => service.status(drain.id)!.waiting === 0, 30_000);
    const numbers = received.map((m) => Number(m.split(' ')[1]));
    assert.equal(numbers.at(-1), 40_000);
    for (let i = 1; i < numbers.length; i++) assert.equal(numbers[i], numbers[i - 1]! + 1);
    assert.equal(numbers.length + service.status(drain.id)!.dropped, 40_000);
  } finally {
    await service.stop();
    receiver.close();
    store.close();
  }
});
