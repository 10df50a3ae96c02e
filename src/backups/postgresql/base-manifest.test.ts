import { test } from 'node:test';
import assert from 'node:assert/strict';
import { manifestFailure, verifyBackupArgv } from './base-manifest.js';

test('pg_verifybackup checks the extracted copy without looking for WAL, which the archive brings', () => {
  assert.deepEqual(verifyBackupArgv('/usr/lib/postgresql/15/bin', '/data/backup-scratch/pg-1/data'), [
    '/usr/lib/postgresql/15/bin/pg_verifybackup',
    '--no-parse-wal',
    '--quiet',
    '/data/backup-scratch/pg-1/data',
  ]);
});

test('a failure names the files pg_verifybackup found wrong, in its words, the first three', () => {
  assert.equal(
    manifestFailure('pg_verifybackup: error: checksum mismatch for file "base/1/1259"\n'),
    'checksum mismatch for file "base/1/1259"',
  );
  const many = [
    'pg_verifybackup: error: "base/1/2608" has size 100 on disk but size 466944 in the manifest',
    'pg_verifybackup: error: checksum mismatch for file "base/1/1259"',
    'pg_verifybackup: error: "base/5/16384" is present in the manifest but not on disk',
    'pg_verifybackup: error: "global/1260" is present in the manifest but not on disk',
    '',
  ].join('\n');
  assert.equal(
    manifestFailure(many),
    '"base/1/2608" has size 100 on disk but size 466944 in the manifest; checksum mismatch for file "base/1/1259"; ' +
      '"base/5/16384" is present in the manifest but not on disk (and 1 more)',
  );
  assert.equal(manifestFailure('\n'), 'pg_verifybackup failed without saying why');
});
