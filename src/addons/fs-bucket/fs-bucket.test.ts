import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appBuckets, mountPathsOf } from './app-buckets.js';
import { defaultAclArgv, directIoArgv, mkfsArgv, mountArgv, sysfsBlockPath, unmountArgv } from './bucket-commands.js';
import { bucketGroupName, bucketHost } from './bucket-names.js';
import { bucketSizeOfPlan } from './bucket-size.js';
import { FsBucketProvider } from './fs-bucket-provider.js';

const ID = 'addon_0d4c1f2e-5b6a-4c3d-9e8f-0a1b2c3d4e5f';
const HOST = 'bucket-0d4c1f2e-5b6a-4c3d-9e8f-0a1b2c3d4e5f-fsbucket';

test('the plan is a size: 1 GiB by default, binary units, 16 MiB to 1 TiB', () => {
  assert.equal(bucketSizeOfPlan(undefined), 1024 ** 3);
  assert.equal(bucketSizeOfPlan('512M'), 512 * 1024 ** 2);
  assert.equal(bucketSizeOfPlan('20g'), 20 * 1024 ** 3);
  assert.equal(bucketSizeOfPlan('2GiB'), 2 * 1024 ** 3);
  assert.equal(bucketSizeOfPlan('1T'), 1024 ** 4);
  assert.throws(() => bucketSizeOfPlan('s_mono'), /plan is its size; "s_mono" is not one/);
  assert.throws(() => bucketSizeOfPlan('8M'), /16 MiB to 1 TiB; 8M is 8 MiB/);
  assert.throws(() => bucketSizeOfPlan('2T'), /16 MiB to 1 TiB/);
  assert.throws(() => bucketSizeOfPlan('-1G'), /not one/);
});

test('the host value and the group follow from the add-on id', () => {
  assert.equal(bucketHost(ID), HOST);
  assert.equal(bucketGroupName(ID), 'slb-0d4c1f2e5b6a');
  assert.match(bucketHost('addon_other'), /^bucket-[0-9a-f]{32}-fsbucket$/);
  assert.match(bucketGroupName('addon_other'), /^slb-[0-9a-f]{12}$/);
});

test('the commands root runs: no reserved blocks, nodev and nosuid, the default ACL on the top folder only', () => {
  assert.deepEqual(mkfsArgv('/d/fs-buckets/x.img', 2400001), [
    'mkfs.ext4',
    '-q',
    '-F',
    '-m',
    '0',
    '-E',
    'root_owner=0:2400001',
    '/d/fs-buckets/x.img',
  ]);
  assert.deepEqual(mountArgv('/d/x.img', '/d/x'), ['mount', '-t', 'ext4', '-o', 'loop,nodev,nosuid,noatime,acl', '/d/x.img', '/d/x']);
  assert.deepEqual(defaultAclArgv('/d/x'), ['setfacl', '-m', 'd:u::rwx,d:g::rwx,d:o::---', '/d/x']);
  assert.deepEqual(unmountArgv('/d/x', true), ['umount', '-l', '/d/x']);
  assert.deepEqual(unmountArgv('/d/x', false), ['umount', '/d/x']);
  assert.deepEqual(directIoArgv('/dev/loop3'), ['losetup', '--direct-io=on', '/dev/loop3']);
});

test("a mounted bucket's device number names its block device in sysfs", () => {
  assert.equal(sysfsBlockPath(0x0703), '/sys/dev/block/7:3');
  // Minors past 255 spread over the high bits (glibc's dev_t): loop300 is 7:300.
  assert.equal(sysfsBlockPath(0x10072c), '/sys/dev/block/7:300');
  assert.equal(sysfsBlockPath((0x103 << 8) | 0x05), '/sys/dev/block/259:5');
});

test('the add-on variable is the host value', () => {
  const provider = new FsBucketProvider({ dataDir: '/nonexistent' });
  assert.deepEqual(provider.env({ host: HOST, size_bytes: '1073741824' }), { BUCKET_HOST: HOST });
  assert.deepEqual(provider.env({}), {});
});

test('an app mounts the linked buckets its variables name, and only those', async () => {
  const placed: string[] = [];
  const linked = [
    { id: ID, name: 'files', host: HOST },
    { id: 'addon_b', name: 'index', host: 'bucket-b-fsbucket' },
  ];
  const place = async (id: string) => {
    placed.push(id);
    return { source: `/d/fs-buckets/${id}`, gid: id === ID ? 2400001 : 2400002 };
  };
  const buckets = await appBuckets({
    env: { CC_FS_BUCKET: `/uploads:${HOST}`, CC_FS_BUCKET_1: '/var/index:bucket-b-fsbucket' },
    linked,
    place,
  });
  assert.deepEqual(buckets, [
    { path: 'uploads', source: `/d/fs-buckets/${ID}`, gid: 2400001 },
    { path: 'var/index', source: '/d/fs-buckets/addon_b', gid: 2400002 },
  ]);
  assert.deepEqual(await appBuckets({ env: {}, linked, place: async () => assert.fail('nothing to mount') }), []);
  // A host of a bucket not linked (another tenant's) is refused, nothing mounted.
  placed.length = 0;
  await assert.rejects(
    appBuckets({ env: { CC_FS_BUCKET: '/uploads:bucket-elsewhere-fsbucket' }, linked, place }),
    /CC_FS_BUCKET names the bucket host bucket-elsewhere-fsbucket, which no FS bucket linked to this application has/,
  );
  assert.deepEqual(placed, []);
  await assert.rejects(appBuckets({ env: { CC_FS_BUCKET: `/../etc:${HOST}` }, linked, place }), /"\." or "\.\."/);
});

test('the listing shows where an app sees a bucket, and nothing for a malformed environment', () => {
  assert.deepEqual(mountPathsOf({ CC_FS_BUCKET: `/uploads:${HOST}`, CC_FS_BUCKET_1: `/b:other` }, HOST), ['/uploads']);
  assert.deepEqual(mountPathsOf({ CC_FS_BUCKET: `uploads:${HOST}` }, HOST), []);
});
