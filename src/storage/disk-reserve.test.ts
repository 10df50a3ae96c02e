import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DiskReserve, DiskReserveError, freeBytesOf } from './disk-reserve.js';

const MiB = 1024 * 1024;
const data = { label: "data folder's disk", path: '/srv/slipway' };
const backups = { label: 'backup folder', path: '/backups' };

test('a build is refused when a reserved disk has less free than the reserve, saying how much and what to do', async () => {
  const free: Record<string, number> = { '/srv/slipway': 900 * MiB, '/backups': 5000 * MiB };
  const reserve = new DiskReserve(1024 * MiB, [data], async (path) => free[path]!);
  const error = await reserve.check('build').then(
    () => assert.fail('a disk below the reserve must refuse the build'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof DiskReserveError);
  assert.equal(error.status, 507);
  assert.equal(error.code, 'disk_reserve');
  assert.match(
    error.message,
    /The build was refused: the data folder's disk \(\/srv\/slipway\) has 900 MiB free, below the reserve of 1 GiB\./,
  );
  assert.match(error.hint!, /Running apps keep serving.*Free space.*--min-free-disk/);

  free['/srv/slipway'] = 1024 * MiB;
  await reserve.check('build');
  free['/backups'] = 10 * MiB;
  await assert.rejects(
    reserve.check('backup of add-on db', [backups]),
    /backup of add-on db was refused: the backup folder \(\/backups\) has 10 MiB free/,
  );
});

test('a reserve of 0 checks nothing, and a disk that cannot be asked does not block work', async () => {
  const asked: string[] = [];
  await new DiskReserve(0, [data], async (path) => {
    asked.push(path);
    return 0;
  }).check('build');
  assert.deepEqual(asked, []);
  await new DiskReserve(MiB, [data], async () => {
    throw new Error('EIO');
  }).check('build');
  assert.deepEqual(await new DiskReserve(MiB, [data], async () => Promise.reject(new Error('EIO'))).free(), [{ ...data, free: null }]);
});

test("the free space of a real folder, and of a folder not made yet (its parent's disk)", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-reserve-'));
  const free = await freeBytesOf(dir);
  assert.ok(free > 0 && Number.isInteger(free));
  const missing = await freeBytesOf(join(dir, 'not', 'yet'));
  // Same filesystem: the figures differ by at most what others wrote meanwhile.
  assert.ok(Math.abs(missing - free) < 64 * MiB);
});
