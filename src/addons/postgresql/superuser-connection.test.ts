import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PINNED_SEARCH_PATH, pinnedClientConfig, pinnedToolEnv } from './superuser-connection.js';

test('a superuser connection pins the search path in its startup options, whatever the target says', () => {
  const fromFields = pinnedClientConfig(
    { host: '/run/pg', port: 5433, user: 'slipway_admin', password: 'x', database: 'postgres' },
    'addon_1234abcd',
  );
  assert.equal(fromFields.options, '-c search_path=pg_catalog');
  assert.equal(fromFields.database, 'addon_1234abcd');
  const fromUrl = pinnedClientConfig('postgresql://admin:pw@db.example:5432/postgres?options=-c%20search_path%3Dpublic&sslmode=disable');
  assert.equal(fromUrl.options, PINNED_SEARCH_PATH);
  assert.doesNotMatch(String(fromUrl.connectionString), /options/, 'a URL cannot bring its own search path back');
  assert.match(String(fromUrl.connectionString), /sslmode=disable/, 'its other settings stay');
});

test("PostgreSQL's own programs get the same pin through PGOPTIONS", () => {
  assert.deepEqual(pinnedToolEnv({ PATH: '/usr/bin', PGUSER: 'slipway_admin' }), {
    PATH: '/usr/bin',
    PGUSER: 'slipway_admin',
    PGOPTIONS: '-c search_path=pg_catalog',
  });
});

test('no PostgreSQL client is opened outside the pinned connection', () => {
  // Every superuser session goes through superuser-connection.ts; a new `new pg.Client` elsewhere
  // in the add-on and backup rooms would bypass the pin.
  const src = new URL('../../', import.meta.url).pathname;
  const roots = [join(src, 'addons'), join(src, 'backups')];
  const offenders: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !path.endsWith('superuser-connection.ts')) {
        if (/new pg\.(Client|Pool)\(/.test(readFileSync(path, 'utf8'))) offenders.push(path);
      }
    }
  };
  for (const root of roots) walk(root);
  assert.deepEqual(offenders, []);
});
