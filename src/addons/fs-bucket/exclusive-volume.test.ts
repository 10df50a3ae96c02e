import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../store/store.js';
import { exclusiveVolumesOf, refuseExclusiveCreation, refuseExclusiveLink, refuseScaleOverExclusive } from './exclusive-volume.js';

function withStore(body: (store: Store) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-exclusive-'));
  const store = Store.open(join(dir, 'store.db'));
  try {
    body(store);
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

test('an exclusive volume: one app, one instance; a shared bucket and other add-ons are not concerned', () =>
  withStore((store) => {
    const org = store.orgs.create('acme');
    const app = store.apps.create({ orgId: org.id, name: 'ledger', type: 'node', region: 'par' });
    const other = store.apps.create({ orgId: org.id, name: 'copy', type: 'node', region: 'par' });
    const made = (name: string, config: Record<string, string>) => {
      const row = store.addons.create({ orgId: org.id, provider: 'fs-bucket', name });
      store.addons.setConfig(row.id, config);
      return store.addons.byId(row.id)!;
    };
    const volume = made('ledger-db', { host: 'h', size_bytes: '1', exclusive: 'true' });
    const shared = made('files', { host: 'h2', size_bytes: '1' });

    assert.doesNotThrow(() => refuseExclusiveLink(store, volume, app));
    store.links.linkAddon(app.id, volume.id);
    store.links.linkAddon(app.id, shared.id);
    assert.deepEqual(
      exclusiveVolumesOf(store, app.id).map((a) => a.name),
      ['ledger-db'],
    );
    assert.throws(() => refuseExclusiveLink(store, volume, other), /The exclusive volume ledger-db is linked to ledger already/);
    assert.doesNotThrow(() => refuseExclusiveLink(store, shared, other), 'a shared bucket takes any app');

    assert.doesNotThrow(() => refuseScaleOverExclusive(store, app, 1));
    assert.throws(() => refuseScaleOverExclusive(store, app, 2), /mounts the exclusive volume ledger-db.*cannot run 2 instances/);
    assert.doesNotThrow(() => refuseScaleOverExclusive(store, other, 5));

    store.apps.setInstances(other.id, 3);
    assert.throws(() => refuseExclusiveCreation('v', [store.apps.byId(other.id)!]), /The application copy may run 3 instances/);
    assert.throws(() => refuseExclusiveCreation('v', [app, other]), /one application at a time; 2 were given/);
  }));
