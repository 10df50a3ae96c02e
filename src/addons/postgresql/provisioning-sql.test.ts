// The statements and command lines a PostgreSQL add-on server is made with, checked as text; the
// servers themselves are started in ../postgresql.test.ts (root only, outside the unit suite).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { hbaConf, initdbArgv, postgresArgv } from './cluster-config.js';
import { createDatabaseSql, createRoleSql, dropSql } from './provisioning-sql.js';

describe('postgresql statements and argv (pure)', () => {
  test("identifiers must be slipway's own addon_<hex> form", () => {
    assert.throws(() => createRoleSql('bob"; DROP TABLE x; --', 'pw'), /not a PostgreSQL add-on identifier/);
    assert.throws(() => dropSql('addon_1234abcd', 'postgres'), /not a PostgreSQL add-on identifier/);
    assert.throws(() => createDatabaseSql('Addon_1234ABCD', 'addon_1234abcd'), /not a PostgreSQL add-on identifier/);
  });

  test('the password reaches the server only as a SCRAM verifier', () => {
    const sql = createRoleSql('addon_1234abcd', 'plaintext-secret');
    assert.match(sql, /^CREATE ROLE "addon_1234abcd" LOGIN .* PASSWORD 'SCRAM-SHA-256\$4096:/);
    assert.ok(!sql.includes('plaintext-secret'));
  });

  test('databases are closed to PUBLIC', () => {
    assert.deepEqual(createDatabaseSql('addon_1234abcd', 'addon_1234abcd').slice(1), [
      'REVOKE ALL ON DATABASE "addon_1234abcd" FROM PUBLIC',
      'GRANT ALL ON DATABASE "addon_1234abcd" TO "addon_1234abcd"',
    ]);
  });

  test('argv arrays and pg_hba.conf', () => {
    assert.deepEqual(initdbArgv('/b/initdb', '/d', '/p').slice(0, 5), ['/b/initdb', '--pgdata', '/d', '--username', 'slipway_admin']);
    const argv = postgresArgv(
      '/b/postgres',
      { dataDir: '/d', socketDir: '/s', hbaFile: '/h', walSpoolDir: '/w' },
      ['127.0.0.1', '10.77.0.1'],
      5433,
    );
    assert.ok(argv.includes('listen_addresses=127.0.0.1,10.77.0.1'));
    assert.ok(argv.includes('port=5433'));
    const hba = hbaConf({
      hostAddresses: ['127.0.0.1', '10.77.0.1'],
      appSubnet: '10.77.0.0/16',
      clients: [{ database: 'addon_1234abcd', role: 'addon_1234abcd', address: '10.77.0.6' }],
    });
    assert.match(hba, /^host\s+all\s+all\s+10\.77\.0\.1\/32\s+scram-sha-256$/m);
    assert.match(hba, /^host\s+addon_1234abcd\s+addon_1234abcd\s+10\.77\.0\.6\/32\s+scram-sha-256$/m);
    assert.doesNotMatch(hba, /10\.77\.0\.0\/16/, 'the subnet as a whole is not let in');
    assert.doesNotMatch(hba, /trust|peer|ident/);
  });
});
