import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mountPointsFrom, mountSourceOf, mountsUnder } from './mount-table.js';

const MOUNTINFO = [
  '22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw',
  '40 22 7:0 / /var/lib/slipway/apps/app_1 rw,nosuid,nodev,relatime shared:20 - ext4 /dev/loop0 rw',
  '41 22 7:1 / /var/lib/slipway/apps/app_2 rw,nosuid,nodev,relatime - ext4 /dev/loop1 rw',
  '42 22 7:2 / /var/lib/slipway/apps-other rw - ext4 /dev/loop2 rw',
  '43 22 7:3 / /tmp/with\\040space rw - ext4 /dev/loop3 rw',
].join('\n');

test('mount points are read from mountinfo, octal escapes undone', () => {
  const points = mountPointsFrom(MOUNTINFO);
  assert.ok(points.has('/var/lib/slipway/apps/app_1'));
  assert.ok(points.has('/tmp/with space'));
  assert.equal(points.has('/var/lib/slipway/apps'), false);
});

test('the source of a mount point is its device', () => {
  assert.equal(mountSourceOf(MOUNTINFO, '/var/lib/slipway/apps/app_2'), '/dev/loop1');
  assert.equal(mountSourceOf(MOUNTINFO, '/nowhere'), undefined);
});

test('mounts under a folder, deepest first, without a sibling sharing its prefix', () => {
  assert.deepEqual(mountsUnder(MOUNTINFO, '/var/lib/slipway/apps'), ['/var/lib/slipway/apps/app_1', '/var/lib/slipway/apps/app_2']);
});
