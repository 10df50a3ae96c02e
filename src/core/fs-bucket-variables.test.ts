import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bucketMountPath, bucketMountRequests, nextBucketVariable } from './fs-bucket-variables.js';

const HOST = 'bucket-0d4c1f2e-5b6a-4c3d-9e8f-0a1b2c3d4e5f-fsbucket';

test('CC_FS_BUCKET and CC_FS_BUCKET_<n> are read as <path>:<host>, paths inside the app folder', () => {
  const requests = bucketMountRequests({
    CC_FS_BUCKET_2: `/data/index:${HOST}`,
    CC_FS_BUCKET: `/uploads:${HOST.toUpperCase()}`,
    CC_FS_BUCKET_10: `/cache/:other-fsbucket`,
    CC_FS_BUCKETS: 'not/one:of-them',
    PATH: '/usr/bin',
  });
  assert.deepEqual(requests, [
    { variable: 'CC_FS_BUCKET', path: 'uploads', host: HOST },
    { variable: 'CC_FS_BUCKET_2', path: 'data/index', host: HOST },
    { variable: 'CC_FS_BUCKET_10', path: 'cache', host: 'other-fsbucket' },
  ]);
  assert.deepEqual(bucketMountRequests({}), []);
});

test('hostile or malformed paths are refused with the variable named', () => {
  const refusals: Array<[string, RegExp]> = [
    ['uploads', /must start with "\/"/],
    ['/', /app's folder itself/],
    ['//', /app's folder itself/],
    ['/../etc', /"\." or "\.\."/],
    ['/uploads/../../etc', /"\." or "\.\."/],
    ['/./x', /"\." or "\.\."/],
    ['/.ssh', /letters, digits/],
    ['/-rf', /letters, digits/],
    ['/up loads', /letters, digits/],
    ['/a\0b', /letters, digits/],
    ['/a\\b', /letters, digits/],
    [`/${'a'.repeat(1100)}`, /longer than/],
  ];
  for (const [path, why] of refusals) {
    assert.throws(
      () => bucketMountPath('CC_FS_BUCKET', path),
      (e: Error) => why.test(e.message) && /^CC_FS_BUCKET /.test(e.message),
      path,
    );
  }
  assert.throws(() => bucketMountRequests({ CC_FS_BUCKET: '/uploads' }), /no ":"/);
  assert.throws(() => bucketMountRequests({ CC_FS_BUCKET: `:${HOST}` }), /no ":"/);
  assert.throws(() => bucketMountRequests({ CC_FS_BUCKET: '/uploads:host/../x' }), /not a host name/);
  assert.throws(() => bucketMountRequests({ CC_FS_BUCKET: '/uploads:' }), /not a host name/);
});

test('two buckets may not share a folder or sit one inside the other', () => {
  assert.throws(
    () => bucketMountRequests({ CC_FS_BUCKET: `/up:${HOST}`, CC_FS_BUCKET_1: `/up/inner:${HOST}` }),
    /overlaps the one of CC_FS_BUCKET \(\/up\)/,
  );
  assert.throws(() => bucketMountRequests({ CC_FS_BUCKET: `/up/:a`, CC_FS_BUCKET_1: `/up:b` }), /overlaps/);
  assert.equal(bucketMountRequests({ CC_FS_BUCKET: '/up:a', CC_FS_BUCKET_1: '/upper:b' }).length, 2);
});

test('link-addon --mount takes the first free variable', () => {
  assert.equal(nextBucketVariable([]), 'CC_FS_BUCKET');
  assert.equal(nextBucketVariable(['CC_FS_BUCKET']), 'CC_FS_BUCKET_1');
  assert.equal(nextBucketVariable(['CC_FS_BUCKET', 'CC_FS_BUCKET_1', 'CC_FS_BUCKET_3']), 'CC_FS_BUCKET_2');
});
