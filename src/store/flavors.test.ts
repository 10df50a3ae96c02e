import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Store } from './store.js';
import { migrations } from './migrations/index.js';
import { DEFAULT_BUILD_FLAVOR, DEFAULT_INSTANCE_FLAVOR } from '../core/flavors.js';

function storePath(): string {
  return join(mkdtempSync(join(tmpdir(), 'slipway-store-')), 'slipway.db');
}

test("a new app has the table's default flavours", () => {
  const store = Store.open(storePath());
  const org = store.orgs.create('o');
  const app = store.apps.create({ orgId: org.id, name: 'a', type: 'node', region: 'par' });
  assert.deepEqual(store.apps.flavors(app.id), { flavor: DEFAULT_INSTANCE_FLAVOR, buildFlavor: DEFAULT_BUILD_FLAVOR });
  const row = store.apps.byId(app.id)!;
  assert.equal(row.flavor, DEFAULT_INSTANCE_FLAVOR);
  assert.equal(row.build_flavor, DEFAULT_BUILD_FLAVOR);
  assert.equal(store.apps.flavors('app_missing'), undefined);
  store.close();
});

test('flavours are set one at a time or both at once, for that app only, and kept across a re-open', () => {
  const path = storePath();
  const store = Store.open(path);
  const org = store.orgs.create('o');
  const app = store.apps.create({ orgId: org.id, name: 'a', type: 'node', region: 'par' });
  const other = store.apps.create({ orgId: org.id, name: 'b', type: 'node', region: 'par' });
  store.apps.setFlavors(app.id, { flavor: 'pico' });
  assert.deepEqual(store.apps.flavors(app.id), { flavor: 'pico', buildFlavor: DEFAULT_BUILD_FLAVOR });
  store.apps.setFlavors(app.id, { buildFlavor: 'XS' });
  assert.deepEqual(store.apps.flavors(app.id), { flavor: 'pico', buildFlavor: 'XS' });
  store.apps.setFlavors(app.id, { flavor: 'M', buildFlavor: 'L' });
  store.apps.setFlavors(app.id, {});
  assert.deepEqual(store.apps.flavors(app.id), { flavor: 'M', buildFlavor: 'L' });
  assert.deepEqual(store.apps.flavors(other.id), { flavor: DEFAULT_INSTANCE_FLAVOR, buildFlavor: DEFAULT_BUILD_FLAVOR });
  store.close();
  const again = Store.open(path);
  assert.deepEqual(again.apps.flavors(app.id), { flavor: 'M', buildFlavor: 'L' });
  again.close();
});

test("an app made before flavours existed gets the table's defaults on upgrade", () => {
  const path = storePath();
  const old = new Database(path);
  old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  for (const m of migrations.filter((m) => m.version < 5)) {
    old.exec(m.sql);
    old.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, new Date().toISOString());
  }
  old.prepare("INSERT INTO orgs (id, name, created_at) VALUES ('org_1', 'o', '2026-01-01')").run();
  old
    .prepare("INSERT INTO apps (id, org_id, name, type, region, created_at) VALUES ('app_1', 'org_1', 'a', 'node', 'par', '2026-01-01')")
    .run();
  old.close();
  const store = Store.open(path);
  assert.deepEqual(store.apps.flavors('app_1'), { flavor: DEFAULT_INSTANCE_FLAVOR, buildFlavor: DEFAULT_BUILD_FLAVOR });
  store.close();
});
