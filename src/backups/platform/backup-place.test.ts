import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { chownSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { FolderBackupStore } from '../store/folder-store.js';
import { backupKeyFromBytes, EncryptedBackupStore } from '../store/encrypted-store.js';
import {
  completeBackupNames,
  incompleteBackupNames,
  type PlatformBackupPlace,
  RecordingStore,
  removeBackupObjects,
} from './backup-place.js';
import { archiveRelease, extractRelease } from './release-archives.js';

async function placeIn(root: string, prefix: string): Promise<PlatformBackupPlace> {
  const raw = await FolderBackupStore.open(root);
  return { raw, prefix, folder: join(root, prefix), describe: () => raw.describe() };
}

test('a backup is whole once its manifest is written; one without is a leftover, removed whole', async () => {
  const root = mkdtempSync(join(tmpdir(), 'platform-place-'));
  try {
    const place = await placeIn(root, 'platform/');
    const put = (key: string, text: string) => place.raw.put(`platform/${key}`, Readable.from([text]));
    await put('slipway-platform-20261125T023000Z/slipway.db', 'store');
    await put('slipway-platform-20261125T023000Z/manifest.json', '{}');
    await put('slipway-platform-20261126T023000Z/slipway.db', 'store');
    await put('releases/app_x/deployment_1.tar', 'tar');
    assert.deepEqual(await completeBackupNames(place), ['slipway-platform-20261125T023000Z']);
    assert.deepEqual(await incompleteBackupNames(place), ['slipway-platform-20261126T023000Z']);
    await removeBackupObjects(place, 'slipway-platform-20261126T023000Z');
    assert.deepEqual(
      (await place.raw.list('platform/')).map((o) => o.key),
      [
        'platform/releases/app_x/deployment_1.tar',
        'platform/slipway-platform-20261125T023000Z/manifest.json',
        'platform/slipway-platform-20261125T023000Z/slipway.db',
      ],
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('the recording store lists the bytes as stored: the sealed ones under an encrypting store', async () => {
  const root = mkdtempSync(join(tmpdir(), 'platform-place-'));
  try {
    const raw = await FolderBackupStore.open(root);
    const recorded = new RecordingStore(raw, 'platform/slipway-platform-20261125T023000Z/');
    const key = backupKeyFromBytes(randomBytes(32), 'test key');
    const body = randomBytes(200_000);
    await new EncryptedBackupStore(recorded, key).put('slipway.db', Readable.from([body]));
    const stored = readFileSync(join(root, 'platform/slipway-platform-20261125T023000Z/slipway.db'));
    assert.deepEqual(recorded.written.get('slipway.db'), {
      size_bytes: stored.length,
      sha256: createHash('sha256').update(stored).digest('hex'),
    });
    assert.equal(stored.subarray(0, 4).toString('latin1'), 'SWBK');
    assert.ok(body.equals(await buffer(await new EncryptedBackupStore(recorded, key).get('slipway.db'))), 'read back under the same name');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a release folder goes into an archive and back as the app's user, links kept as links", async (t) => {
  if (process.getuid?.() !== 0) return t.skip('needs root to act as another user');
  const root = mkdtempSync(join(tmpdir(), 'platform-release-'));
  const owner = { uid: 65534, gid: 65534 };
  try {
    const release = join(root, 'release');
    mkdirSync(join(release, 'lib'), { recursive: true });
    writeFileSync(join(release, 'lib', 'server.js'), 'console.log(1)', { mode: 0o755 });
    symlinkSync('/etc/shadow', join(release, 'shadow'));
    for (const path of [release, join(release, 'lib'), join(release, 'lib', 'server.js')]) chownSync(path, owner.uid, owner.gid);
    const store = await FolderBackupStore.open(join(root, 'store'));
    await archiveRelease(store, 'releases/app_x/deployment_1.tar', release, owner);
    const dest = join(root, 'restored');
    mkdirSync(dest, { mode: 0o700 });
    chownSync(dest, owner.uid, owner.gid);
    await extractRelease(await store.get('releases/app_x/deployment_1.tar'), dest, owner);
    assert.equal(readFileSync(join(dest, 'lib', 'server.js'), 'utf8'), 'console.log(1)');
    assert.equal(statSync(join(dest, 'lib', 'server.js')).mode & 0o777, 0o755);
    assert.equal(statSync(join(dest, 'lib', 'server.js')).uid, owner.uid);
    assert.equal(readlinkSync(join(dest, 'shadow')), '/etc/shadow', 'the link is a link, its target never read');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
