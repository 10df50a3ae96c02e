import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decide, readOnlySql, writableSql } from './database-sizes.js';

const MiB = 1024 * 1024;
const db = 'addon_1234abcd';

test('a database over its size becomes read-only; below again, writable; growing while read-only ends its sessions', () => {
  assert.deepEqual(decide({ database: db, sizeBytes: 20 * MiB, readOnly: false }, 16 * MiB, undefined), { action: 'make-read-only' });
  assert.deepEqual(decide({ database: db, sizeBytes: 20 * MiB, readOnly: true }, 16 * MiB, 20 * MiB), { action: null });
  assert.deepEqual(decide({ database: db, sizeBytes: 30 * MiB, readOnly: true }, 16 * MiB, 20 * MiB), { action: 'end-sessions' });
  assert.deepEqual(decide({ database: db, sizeBytes: 10 * MiB, readOnly: true }, 16 * MiB, 20 * MiB), { action: 'make-writable' });
  assert.deepEqual(decide({ database: db, sizeBytes: 10 * MiB, readOnly: false }, 16 * MiB, 9 * MiB), { action: null });
});

test('the statements name only add-on databases, quoted', () => {
  assert.deepEqual(readOnlySql(db), [
    'ALTER DATABASE "addon_1234abcd" SET default_transaction_read_only = on',
    "SELECT pg_catalog.pg_terminate_backend(pid) FROM pg_catalog.pg_stat_activity WHERE datname = 'addon_1234abcd' AND pid <> pg_catalog.pg_backend_pid()",
  ]);
  assert.equal(writableSql(db), 'ALTER DATABASE "addon_1234abcd" RESET default_transaction_read_only');
  assert.throws(() => readOnlySql('postgres'), /not a PostgreSQL add-on identifier/);
});
