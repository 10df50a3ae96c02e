import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isWalFileName, walKey } from './wal-shipper.js';
import { archiveCommand } from '../../addons/postgresql/cluster-config.js';

test('only the names PostgreSQL archives are shipped', () => {
  for (const name of [
    '000000010000000000000003',
    '000000020000000000000003.partial',
    '00000002.history',
    '000000010000000000000002.00000028.backup',
  ]) {
    assert.ok(isWalFileName(name), name);
  }
  for (const name of ['.000000010000000000000003.part', '../000000010000000000000003', '00000001000000000000000g', 'x', '']) {
    assert.ok(!isWalFileName(name), name);
  }
  assert.equal(walKey('000000010000000000000003'), 'postgresql/wal/000000010000000000000003');
  assert.throws(() => walKey('../etc'), /not a WAL file name/);
});

test('archive_command copies under a hidden name, syncs, then renames', () => {
  assert.equal(
    archiveCommand("/data/it's/wal-spool"),
    `cp %p '/data/it'\\''s/wal-spool'/.%f.part && sync '/data/it'\\''s/wal-spool'/.%f.part && mv -f '/data/it'\\''s/wal-spool'/.%f.part '/data/it'\\''s/wal-spool'/%f && sync '/data/it'\\''s/wal-spool'`,
  );
  assert.throws(() => archiveCommand('/data/100%/spool'), /contains a %/);
});
