import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireSubnetLock } from './subnet-lock.js';

test('a subnet held by a live daemon is refused with the --subnet to use; released, it is free again', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-subnet-lock-'));
  // Another live process holds 10.231.0.0/16, as a second daemon would.
  const other = spawn('sleep', ['30']);
  try {
    writeFileSync(join(dir, 'slipway231.owner'), JSON.stringify({ pid: other.pid, dataDir: '/srv/other' }));
    assert.throws(
      () => acquireSubnetLock('10.231.0.0/16', '/srv/mine', dir),
      /Another slipway daemon \(pid \d+, data folder \/srv\/other\) already runs its apps on the subnet 10\.231\.0\.0\/16 \(bridge slipway231\)\.\n.*--subnet \(for example --subnet 10\.232\.0\.0\/16\)/,
    );
    const mine = acquireSubnetLock('10.232.0.0/16', '/srv/mine', dir);
    mine.release();
    assert.deepEqual(readdirSync(dir), ['slipway231.owner']);
  } finally {
    other.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a lock left by a daemon killed with -9 (a dead pid) is taken over', () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-subnet-lock-'));
  try {
    writeFileSync(join(dir, 'slipway233.owner'), JSON.stringify({ pid: 2 ** 22 + 7, dataDir: '/srv/gone' }));
    const lock = acquireSubnetLock('10.233.0.0/16', '/srv/mine', dir);
    assert.deepEqual(JSON.parse(readFileSync(join(dir, 'slipway233.owner'), 'utf8')), { pid: process.pid, dataDir: '/srv/mine' });
    lock.release();
    assert.equal(existsSync(join(dir, 'slipway233.owner')), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
