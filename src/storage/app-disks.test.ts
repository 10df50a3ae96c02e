import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppDisks } from './app-disks.js';
import { DeployLayout } from './deploy-layout.js';

const MiB = 1024 * 1024;
const root = process.getuid?.() === 0;

test('an app filesystem: made once, mounted once however many ask, full at its budget, gone with the app', {
  skip: root ? false : 'needs root (mount, loop devices)',
}, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'slipway-app-disks-'));
  const layout = new DeployLayout(dataDir);
  let budget = 32 * MiB;
  const lines: string[] = [];
  const disks = new AppDisks({ layout, budgetOf: () => budget, log: (line) => lines.push(line) });
  const appId = 'app_00000000-0000-0000-0000-000000000001';
  const mountsOf = () =>
    readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .filter((l) => l.includes(` ${layout.appFolder(appId)} `)).length;
  try {
    await Promise.all([disks.ensure(appId), disks.ensure(appId), disks.ensure(appId)]);
    assert.ok(disks.mounted(appId), 'mounted');
    assert.ok(mountsOf() <= 1, 'mounted once');
    await disks.ensure(appId);
    assert.ok(mountsOf() <= 1, 'a mounted filesystem is left alone');
    const use = (await disks.use(appId))!;
    assert.equal(use.budgetBytes, 32 * MiB);
    assert.ok(use.freeBytes > 20 * MiB && use.freeBytes < 32 * MiB, JSON.stringify(use));
    // The kernel refuses what goes past it.
    assert.throws(() => writeFileSync(join(layout.appFolder(appId), 'big'), Buffer.alloc(40 * MiB)), { code: 'ENOSPC' });
    await assert.rejects(disks.setBudget(appId, 16 * MiB), /cannot shrink below 32 MiB/);
    // Grown at the next mount where a mounted one cannot grow (no CAP_SYS_RESOURCE), else at once.
    budget = 48 * MiB;
    const applies = await disks.setBudget(appId, 48 * MiB);
    if (applies !== 'now') {
      await disks.unmountAll();
      assert.equal(disks.mounted(appId), false);
      await disks.ensure(appId);
    }
    const grown = (await disks.use(appId))!;
    assert.ok(
      grown.freeBytes + grown.usedBytes > use.freeBytes + use.usedBytes + 12 * MiB,
      `the filesystem grew: ${JSON.stringify(grown)}`,
    );
    await disks.remove(appId);
    assert.equal(disks.mounted(appId), false, 'unmounted');
    assert.equal(existsSync(layout.diskImage(appId)), false, 'the image is removed');
  } finally {
    await disks.unmountAll().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
});
