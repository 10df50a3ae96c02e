import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, openSync, closeSync, rmSync, statSync, writeSync, ftruncateSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freezeArgv } from '../../addons/fs-bucket/bucket-freeze.js';
import { FolderBackupStore } from '../store/folder-store.js';
import { BucketBackups, copyArgv, fsckArgv, regroupArgv, sizeText } from './bucket-backups.js';
import { fetchImage, imageKey, imageSha256, memberName, packArgv, storeImage, unpackArgv } from './bucket-image.js';

const ID = 'addon_0b6f3c1e-5a8d-4c2b-9e7f-1a2b3c4d5e6f';

test('images are named by bucket and backup, and nothing else reaches the key or the member', () => {
  assert.equal(imageKey(ID, 'backup_m3x2'), `fs-bucket/${ID}/backup_m3x2.img.tar.gz`);
  assert.equal(memberName(ID), `${ID}.img`);
  assert.throws(() => imageKey('../x', 'backup_1'), /cannot name a bucket image/);
  assert.throws(() => imageKey(ID, 'b/../../c'), /cannot name a bucket image/);
  assert.throws(() => memberName('addon_x/../../etc'), /Not an add-on id/);
});

test('the commands name the image, the mount point and the copy, never a path inside the bucket', () => {
  assert.deepEqual(freezeArgv('/d/fs-buckets/x', true), ['fsfreeze', '--freeze', '/d/fs-buckets/x']);
  assert.deepEqual(freezeArgv('/d/fs-buckets/x', false), ['fsfreeze', '--unfreeze', '/d/fs-buckets/x']);
  assert.deepEqual(copyArgv('/d/x.img', '/s/x.img'), ['cp', '--reflink=auto', '--sparse=always', '--', '/d/x.img', '/s/x.img']);
  assert.deepEqual(fsckArgv('/s/x.img'), ['e2fsck', '-f', '-n', '/s/x.img']);
  assert.deepEqual(packArgv('/s', 'x.img'), [
    'tar',
    '--create',
    '--sparse',
    '--format=gnu',
    '--file=-',
    '--directory',
    '/s',
    '--',
    'x.img',
  ]);
  assert.deepEqual(
    unpackArgv('/s', 'x.img'),
    ['tar', '--extract', '--file=-', '--directory', '/s', '--no-same-owner', '--no-same-permissions', '--', 'x.img'],
    'only the one member, owned by whoever unpacks it',
  );
  // Links are changed as links and never followed; files given another group keep it.
  assert.deepEqual(regroupArgv(2400001, 2400002, '/s/mnt'), ['chown', '-R', '-h', '-P', '--from=:2400001', ':2400002', '/s/mnt']);
});

test('a sparse image goes into the store as its written blocks and comes back the same, holes included', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-bucket-image-'));
  try {
    const source = join(dir, 'source');
    mkdirSync(source);
    const image = join(source, memberName(ID));
    const fd = openSync(image, 'w');
    ftruncateSync(fd, 64 * 1024 ** 2);
    writeSync(fd, Buffer.alloc(4096, 'a'), 0, 4096, 0);
    writeSync(fd, Buffer.alloc(4096, 'b'), 0, 4096, 40 * 1024 ** 2);
    closeSync(fd);
    const sum = await imageSha256(image);
    assert.equal(sum.sizeBytes, 64 * 1024 ** 2);
    const store = await FolderBackupStore.open(join(dir, 'store'));
    const key = imageKey(ID, 'backup_1');
    const stored = await storeImage(store, key, source, memberName(ID));
    assert.ok(stored < 64 * 1024, `the holes are not stored: ${stored} bytes`);
    const back = join(dir, 'back');
    mkdirSync(back);
    const unpacked = await fetchImage(store, key, back, memberName(ID));
    assert.deepEqual(await imageSha256(unpacked), sum);
    assert.ok(statSync(unpacked).blocks * 512 < 1024 ** 2, 'unpacked sparse');
    // An archive without the member asked for is refused by tar, saying so.
    const other = join(dir, 'other');
    mkdirSync(other);
    await assert.rejects(fetchImage(store, key, other, memberName(ID.replace('0b6f', '1b6f'))), /Not found in archive/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a bucket restored --as is made at the source size, an exclusive volume when the source was one', () => {
  const engine = new BucketBackups({} as ConstructorParameters<typeof BucketBackups>[0]);
  const source = { id: ID, name: 'files', config: { host: 'h', size_bytes: String(64 * 1024 ** 2) } };
  assert.deepEqual(engine.newAddonOptions(source), { plan: '64M' });
  assert.deepEqual(engine.newAddonOptions({ ...source, config: { ...source.config, exclusive: 'true' } }), {
    plan: '64M',
    exclusive: true,
  });
  assert.deepEqual(engine.newAddonOptions({ ...source, config: {} }), {});
});

test('the bytes used read as people read them', () => {
  assert.deepEqual([sizeText(14 * 1024), sizeText(3.25 * 1024 ** 2), sizeText(1.5 * 1024 ** 3)], ['14 KiB', '3.3 MiB', '1.5 GiB']);
});
