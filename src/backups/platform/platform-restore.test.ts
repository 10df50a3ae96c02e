import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checksumTree } from './files.js';
import type { PlatformManifest } from './manifest.js';
import { assertEmptyDataFolder, checkPlatformBackup, locateBackup } from './platform-restore.js';

/** A backup folder as `system backup` lays it out, with a manifest of its files. */
async function writeBackup(folder: string): Promise<void> {
  mkdirSync(join(folder, 'repos'), { recursive: true });
  writeFileSync(join(folder, 'slipway.db'), 'the store');
  writeFileSync(join(folder, 'repos', 'app_x.bundle'), 'a bundle');
  const manifest: PlatformManifest = {
    format: 1,
    slipway_version: '1.0.0',
    created_at: '2026-11-26T02:30:00.000Z',
    store: 'slipway.db',
    repositories: [{ app_id: 'app_x', file: 'repos/app_x.bundle' }],
    addons: [],
    postgresql: null,
    files: await checksumTree(folder),
  };
  writeFileSync(join(folder, 'manifest.json'), JSON.stringify(manifest));
}

test('the newest whole backup of a folder is restored; a half-written one never is; a damaged one is refused', async () => {
  const root = mkdtempSync(join(tmpdir(), 'platform-restore-'));
  try {
    await assert.rejects(locateBackup(join(root, 'absent')), /There is no folder .*absent to restore from/);
    await assert.rejects(locateBackup(root), /holds no platform backup \(a slipway-platform-<time> folder with a manifest\.json\)/);
    await writeBackup(join(root, 'slipway-platform-20261125T023000Z'));
    await writeBackup(join(root, 'slipway-platform-20261126T023000Z'));
    mkdirSync(join(root, '.slipway-platform-20261127T023000Z.partial'));
    // A backup whose manifest was not written yet (the last of its files) is not whole.
    mkdirSync(join(root, 'slipway-platform-20261128T023000Z', 'repos'), { recursive: true });
    assert.equal(await locateBackup(root), join(root, 'slipway-platform-20261126T023000Z'));
    const named = join(root, 'slipway-platform-20261125T023000Z');
    assert.equal(await locateBackup(named), named, 'a backup named directly is that one');
    const checked = await checkPlatformBackup(root);
    assert.equal(checked.manifest.repositories[0]?.file, 'repos/app_x.bundle');
    truncateSync(join(root, 'slipway-platform-20261126T023000Z', 'repos', 'app_x.bundle'), 3);
    await assert.rejects(checkPlatformBackup(root), /repos\/app_x\.bundle in the backup does not match its checksum in the manifest/);
    writeFileSync(join(named, 'manifest.json'), '{"format":1');
    await assert.rejects(checkPlatformBackup(named), /manifest\.json is not JSON: the backup is damaged/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a restore goes onto an absent or empty data folder only', async () => {
  const root = mkdtempSync(join(tmpdir(), 'platform-restore-'));
  try {
    await assertEmptyDataFolder(join(root, 'absent'));
    const data = join(root, 'data');
    mkdirSync(data);
    await assertEmptyDataFolder(data);
    writeFileSync(join(data, 'slipway.db'), '');
    await assert.rejects(assertEmptyDataFolder(data), /needs an empty data folder, and .*data holds 1 entry; nothing was changed/);
    await assert.rejects(assertEmptyDataFolder(join(data, 'slipway.db')), /is not a folder/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
