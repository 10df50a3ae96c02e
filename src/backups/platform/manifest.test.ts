import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  backupName,
  backupsBeyond,
  backupTime,
  completeBackups,
  leftoverTemporaries,
  namesStoredBackup,
  parseManifest,
  platformBackupDue,
  releaseObject,
  temporaryName,
  type PlatformManifest,
} from './manifest.js';
import { checkFiles, checksumTree, copyPlatformFiles } from './files.js';

const SHA = 'a'.repeat(64);

function manifest(change: Partial<PlatformManifest> = {}): PlatformManifest {
  return {
    format: 1,
    slipway_version: '1.0.0',
    created_at: '2026-11-26T18:00:00.000Z',
    store: 'slipway.db',
    repositories: [{ app_id: 'app_x', file: 'repos/app_x.bundle' }],
    addons: [],
    postgresql: null,
    files: [
      { path: 'slipway.db', size_bytes: 10, sha256: SHA },
      { path: 'repos/app_x.bundle', size_bytes: 3, sha256: SHA },
    ],
    ...change,
  };
}

test('a backup is named after its UTC second, written under a hidden name, and sorts by time', () => {
  const name = backupName(new Date('2026-11-26T18:05:09.123Z'));
  assert.equal(name, 'slipway-platform-20261126T180509Z');
  assert.equal(temporaryName(name), '.slipway-platform-20261126T180509Z.partial');
  assert.equal(backupTime(name)?.toISOString(), '2026-11-26T18:05:09.000Z');
  assert.equal(backupTime(temporaryName(name)), undefined);
});

test('only complete backups count, newest first; a half-written one never does', () => {
  const entries = [
    'slipway-platform-20261124T023000Z',
    '.slipway-platform-20261126T023000Z.partial',
    'slipway-platform-20261125T023000Z',
    'notes.txt',
  ];
  assert.deepEqual(completeBackups(entries), ['slipway-platform-20261125T023000Z', 'slipway-platform-20261124T023000Z']);
  assert.deepEqual(leftoverTemporaries(entries), ['.slipway-platform-20261126T023000Z.partial']);
  assert.deepEqual(backupsBeyond(entries, 1), ['slipway-platform-20261124T023000Z']);
  assert.deepEqual(backupsBeyond(entries, 5), []);
});

test('the daily platform backup is due once its time came and none was made or tried since', () => {
  const slot = new Date('2026-11-26T02:30:00Z');
  const made = ['slipway-platform-20261125T023012Z'];
  assert.equal(platformBackupDue(made, slot, new Date('2026-11-26T02:29:00Z')), false, 'before its time');
  assert.equal(platformBackupDue(made, slot, new Date('2026-11-26T02:31:00Z')), true);
  assert.equal(platformBackupDue([], slot, new Date('2026-11-26T02:31:00Z')), true, 'the first one');
  assert.equal(platformBackupDue(['slipway-platform-20261126T023005Z'], slot, new Date('2026-11-26T02:40:00Z')), false, 'made today');
  assert.equal(
    platformBackupDue(made, slot, new Date('2026-11-26T02:40:00Z'), new Date('2026-11-26T02:31:00Z')),
    false,
    'a failure today waits for tomorrow',
  );
  assert.equal(
    platformBackupDue(['.slipway-platform-20261126T023005Z.partial', ...made], slot, new Date('2026-11-26T02:40:00Z')),
    true,
    'a half-written one is no backup',
  );
});

test('--restore-from names a backup of the backup store by its name or `latest`; anything else is a folder', () => {
  assert.equal(namesStoredBackup('latest'), true);
  assert.equal(namesStoredBackup('slipway-platform-20261126T023000Z'), true);
  for (const folder of ['./slipway-platform-20261126T023000Z', '/mnt/backups', 'backups', 'slipway-platform-x']) {
    assert.equal(namesStoredBackup(folder), false, folder);
  }
});

test('a manifest is read only when every file it names stays inside the backup and has a checksum', () => {
  assert.equal(parseManifest(JSON.stringify(manifest())).store, 'slipway.db');
  assert.throws(() => parseManifest('{'), /not JSON: the backup is damaged/);
  assert.throws(() => parseManifest(JSON.stringify(manifest({ format: 4 }))), /format 4; this slipway reads formats 1 and 2 and 3/);
  // Release archives sit beside the backups under the one name slipway gives them: nothing else is read.
  const release = { app_id: 'app_x', deployment_id: 'deployment_1', object: 'releases/app_x/deployment_1.tar', size_bytes: 4, sha256: SHA };
  assert.equal(parseManifest(JSON.stringify(manifest({ format: 3, releases: [release] }))).releases?.[0]?.object, release.object);
  for (const object of ['releases/app_x/../../slipway.db', '../releases/app_x/deployment_1.tar', 'releases/app_y/deployment_1.tar']) {
    const bad = manifest({ format: 3, releases: [{ ...release, object }] });
    assert.throws(() => parseManifest(JSON.stringify(bad)), /names a release archive it would not have made/, object);
  }
  const encrypted = manifest({ format: 3, encrypted: { key_id: '0123456789abcdef' }, releases: [release] });
  assert.throws(
    () => parseManifest(JSON.stringify(encrypted)),
    /names a release archive it would not have made/,
    'an encrypted one names its key',
  );
  assert.equal(releaseObject('app_x', 'deployment_1', '0123456789abcdef'), 'releases/app_x/deployment_1-0123456789abcdef.tar');
  for (const path of ['../etc/passwd', '/etc/passwd', 'repos/../../x', 'a//b', '']) {
    const bad = manifest({ files: [...manifest().files, { path, size_bytes: 1, sha256: SHA }] });
    assert.throws(() => parseManifest(JSON.stringify(bad)), /names a file outside the backup/, path);
  }
  const unlisted = manifest({ files: [manifest().files[0]!] });
  assert.throws(() => parseManifest(JSON.stringify(unlisted)), /names repos\/app_x\.bundle but gives no checksum/);
  const withCluster = (pg: Record<string, unknown>) =>
    JSON.stringify(
      manifest({
        postgresql: { base_key: 'postgresql/base/x.tar', restore_point: 'p', admin_password_file: 'slipway.db', ...pg } as never,
      }),
    );
  assert.equal(parseManifest(withCluster({ major: 16 })).postgresql?.major, 16);
  assert.throws(() => parseManifest(withCluster({})), /lacks the PostgreSQL major version/);
  assert.throws(() => parseManifest(withCluster({ major: 16, admin_password_file: 'pw' })), /names pw but gives no checksum/);
  const noSum = manifest({ files: [{ path: 'slipway.db', size_bytes: 1, sha256: 'x' }] });
  assert.throws(() => parseManifest(JSON.stringify(noSum)), /no size or checksum for slipway\.db/);
});

test('the files are copied without following links, checksummed, and a changed one is caught', async () => {
  const root = mkdtempSync(join(tmpdir(), 'platform-files-'));
  try {
    const source = join(root, 'ca');
    mkdirSync(join(source, 'provisional'), { recursive: true });
    writeFileSync(join(source, 'ca.key'), 'key');
    writeFileSync(join(source, 'provisional', 'ca.crt'), 'crt');
    const backup = join(root, 'backup');
    mkdirSync(backup);
    assert.equal(await copyPlatformFiles(source, join(backup, 'ca')), 2);
    assert.equal(await copyPlatformFiles(join(root, 'absent'), join(backup, 'absent')), 0);
    const files = await checksumTree(backup);
    assert.deepEqual(
      files.map((f) => [f.path, f.size_bytes]),
      [
        ['ca/ca.key', 3],
        ['ca/provisional/ca.crt', 3],
      ],
    );
    await checkFiles(backup, files);
    writeFileSync(join(backup, 'ca', 'ca.key'), 'KEY');
    await assert.rejects(checkFiles(backup, files), /ca\/ca\.key in the backup does not match its checksum/);
    rmSync(join(backup, 'ca', 'provisional', 'ca.crt'));
    await assert.rejects(checkFiles(backup, files.slice(1)), /lacks ca\/provisional\/ca\.crt/);
    symlinkSync('/etc/passwd', join(source, 'evil'));
    await assert.rejects(copyPlatformFiles(source, join(root, 'again')), /neither a file nor a folder; the backup does not follow it/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
