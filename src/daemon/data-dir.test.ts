import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveDataDir } from './data-dir.js';

test('the data folder: flag, then SLIPWAY_DATA_DIR, then a per-user default', () => {
  assert.equal(resolveDataDir('/srv/slipway', { SLIPWAY_DATA_DIR: '/x' }, 1000), '/srv/slipway');
  assert.equal(resolveDataDir(undefined, { SLIPWAY_DATA_DIR: '/x' }, 1000), '/x');
  assert.equal(resolveDataDir(undefined, { XDG_DATA_HOME: '/home/u/.data' }, 1000), '/home/u/.data/slipway');
  assert.equal(resolveDataDir(undefined, { XDG_DATA_HOME: '/root/.data' }, 0), '/var/lib/slipway', "root's home is closed to the app user");
});
