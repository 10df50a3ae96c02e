import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DiskFullError, isDiskFull, userFacingDiskError } from './disk-full.js';
import { NotFoundError } from './errors.js';
import { sendError } from '../api/http-router.js';

/** A real SQLITE_FULL: a database that may not grow past its pages, written past them. */
function realSqliteFull(): unknown {
  const db = new Database(join(mkdtempSync(join(tmpdir(), 'slipway-full-')), 'full.db'));
  db.exec('CREATE TABLE t (v TEXT)');
  db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true })}`);
  try {
    for (let i = 0; i < 100; i++) db.prepare('INSERT INTO t VALUES (?)').run('x'.repeat(10_000));
  } catch (error) {
    return error;
  } finally {
    db.close();
  }
  return assert.fail('the database grew past max_page_count');
}

test("SQLite's full database and Node's ENOSPC are a full disk; other errors are not", () => {
  const full = realSqliteFull();
  assert.equal((full as { code: string }).code, 'SQLITE_FULL');
  assert.equal(isDiskFull(full), true);
  assert.equal(isDiskFull(Object.assign(new Error('write'), { code: 'ENOSPC' })), true);
  assert.equal(isDiskFull(Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' })), true);
  assert.equal(isDiskFull(Object.assign(new Error('busy'), { code: 'SQLITE_BUSY' })), false);
  assert.equal(isDiskFull(Object.assign(new Error('constraint'), { code: 'SQLITE_CONSTRAINT_UNIQUE' })), false);
  assert.equal(isDiskFull(new Error('plain')), false);
  assert.equal(isDiskFull(undefined), false);
  assert.ok(userFacingDiskError(full) instanceof DiskFullError);
  const notFound = new NotFoundError('no app');
  assert.equal(userFacingDiskError(notFound), notFound);
});

test('the API answers a full disk with 507 and what to do, not an internal error', () => {
  let status = 0;
  let body = '';
  const res = {
    headersSent: false,
    writeHead(code: number) {
      status = code;
    },
    end(text: string) {
      body = text;
    },
  } as unknown as Parameters<typeof sendError>[0];
  sendError(res, realSqliteFull());
  assert.equal(status, 507);
  const { error } = JSON.parse(body) as { error: { code: string; message: string; hint: string } };
  assert.equal(error.code, 'disk_full');
  assert.match(error.message, /data folder's disk is full/);
  assert.match(error.hint, /Free space on that disk.*then retry/);
});
