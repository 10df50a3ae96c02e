import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BackupStoreError } from './backup-store.js';
import { EncryptedBackupStore } from './encrypted-store.js';
import { FolderBackupStore } from './folder-store.js';
import { defaultBackupFolder, openBackupStore } from './open-store.js';
import { S3BackupStore } from './s3-store.js';

const env = { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI' };

test('the default backup folder sits beside the data folder, not inside it', () => {
  assert.equal(defaultBackupFolder('/var/lib/slipway'), '/var/lib/slipway-backups');
  assert.equal(defaultBackupFolder('/var/lib/slipway/'), '/var/lib/slipway-backups');
  assert.equal(defaultBackupFolder('/srv/data'), '/srv/data-backups');
});

test('a folder, an S3 URL, and either one encrypted with a key file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-open-store-'));
  const keyFile = join(dir, 'key');
  writeFileSync(keyFile, 'k'.repeat(64), { mode: 0o600 });

  const folder = await openBackupStore({ folder: join(dir, 'backups'), env: {} });
  assert.ok(folder instanceof FolderBackupStore);

  const s3 = await openBackupStore({ s3Url: 'http://127.0.0.1:8333/backups/slipway', env });
  assert.ok(s3 instanceof S3BackupStore);
  assert.match(s3.describe(), /credentials from the environment/);
  s3.close?.();

  const encryptedFolder = await openBackupStore({ folder: join(dir, 'backups'), keyFile, env: {} });
  assert.ok(encryptedFolder instanceof EncryptedBackupStore);
  assert.match(
    encryptedFolder.describe(),
    new RegExp(`^the folder .*backups, encrypted with the key in ${keyFile} \\(key id [0-9a-f]{16}\\)$`),
  );

  const encryptedS3 = await openBackupStore({ s3Url: 'http://127.0.0.1:8333/backups', keyFile, env });
  assert.ok(encryptedS3 instanceof EncryptedBackupStore);
  encryptedS3.close?.();

  const credentials = join(dir, 's3-credentials');
  writeFileSync(credentials, 'access_key_id=a\nsecret_access_key=b\n', { mode: 0o600 });
  const fromFile = await openBackupStore({ s3Url: 'http://127.0.0.1:8333/backups', s3CredentialsFile: credentials, env: {} });
  assert.match(fromFile.describe(), new RegExp(`credentials from ${credentials}`));
  fromFile.close?.();
});

test('combinations that cannot be right are refused, saying what to give', async () => {
  const refused = async (options: Parameters<typeof openBackupStore>[0], message: RegExp) =>
    assert.rejects(openBackupStore(options), (e: unknown) => e instanceof BackupStoreError && message.test(e.message), message.source);
  await refused({ folder: '/var/lib/slipway-backups', s3Url: 'http://127.0.0.1:8333/backups', env }, /both a folder .* and an S3 URL/);
  await refused(
    { folder: '/var/lib/slipway-backups', s3CredentialsFile: '/etc/slipway/s3', env },
    /credentials file .* was given, but no S3 URL/,
  );
  await refused({ env }, /No backup store was given/);
  await refused({ s3Url: 'http://127.0.0.1:8333/backups', env: {} }, /AWS_ACCESS_KEY_ID is not set/);
  await refused({ folder: 'relative/backups', env }, /not an absolute path/);
  await refused({ s3Url: 'http://127.0.0.1:8333/backups', keyFile: '/nonexistent/key', env }, /Cannot read the backup key file/);
});
