import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../store/store.js';
import type { PlatformEvent } from '../../core/platform-events.js';
import { AUTOSCALING_CAUSE } from '../../core/scaling-ranges.js';
import { platformEvents } from './events.js';

test('an autoscaling decision is told as scaling.up or scaling.down, its activity record as no deployment', () => {
  const store = Store.open(join(mkdtempSync(join(tmpdir(), 'slipway-events-')), 'slipway.db'));
  const org = store.orgs.create('acme');
  const app = store.apps.create({ orgId: org.id, name: 'shop', type: 'node', region: 'par' });
  const told = platformEvents(store);
  const seen: PlatformEvent[] = [];
  told.events.subscribe((e) => seen.push(e));

  const record = store.deployments.create({ appId: app.id, commit: 'c'.repeat(40), cause: AUTOSCALING_CAUSE, userId: null });
  store.deployments.finish(record.id, 'OK', '1 → 2 instances: CPU 90% of 1 instance for 6 s');
  told.deploymentFinished(store.deployments.byId(record.id)!);
  assert.equal(seen.length, 0, 'the activity record of a decision is no deployment.succeeded');

  const at = '2026-11-29T05:40:12.000Z';
  told.scaled({ appId: app.id, at, direction: 'up', from: 1, to: 2, reason: 'CPU 90% of 1 instance for 6 s', outcome: 'done' });
  told.scaled({ appId: app.id, at, direction: 'down', from: 2, to: 1, reason: 'CPU 3% of 2 instances for 60 s', outcome: 'failed' });
  told.scaled({
    appId: app.id,
    at,
    direction: 'up',
    from: 1,
    to: 1,
    flavor: { from: 'nano', to: 'XS' },
    reason: 'memory 93% of nano (512 MiB) for 6 s',
    outcome: 'done',
  });
  assert.deepEqual(
    seen.map((e) => [e.type, e.summary, e.details]),
    [
      [
        'scaling.up',
        'shop scaled out: 1 → 2 instances: CPU 90% of 1 instance for 6 s',
        { from: 1, to: 2, reason: 'CPU 90% of 1 instance for 6 s', outcome: 'done' },
      ],
      [
        'scaling.down',
        'shop scaled in: 2 → 1 instances: CPU 3% of 2 instances for 60 s (failed)',
        { from: 2, to: 1, reason: 'CPU 3% of 2 instances for 60 s', outcome: 'failed' },
      ],
      [
        'scaling.up',
        'shop scaled up: nano → XS: memory 93% of nano (512 MiB) for 6 s',
        { from: 1, to: 1, from_flavor: 'nano', to_flavor: 'XS', reason: 'memory 93% of nano (512 MiB) for 6 s', outcome: 'done' },
      ],
    ],
  );
  store.close();
});
