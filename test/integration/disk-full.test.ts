/**
 * A full data disk (docs/operations.md, "A full disk"): the daemon's data folder on a small
 * ext4 filesystem of its own, filled from outside by a file as root (the fault). Writes through
 * the CLI are refused with a clear error, reads go on, the store stays whole, and once space is
 * freed writes work again without a restart. The control plane only: no app is pushed.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { type LoopDisk, makeLoopDisk } from '../support/loop-disk.js';

const needsRoot = process.getuid?.() === 0 ? false : 'a loop-mounted data folder needs root';

let disk: LoopDisk | undefined;
const filler = () => join(disk!.mountPoint, 'filler');
let daemon: TestDaemon | undefined;

before(async () => {
  if (needsRoot) return;
  disk = makeLoopDisk('slipway-disk-full', '128M');
  const dataDir = disk.dataDir;
  daemon = await startDaemon(['--app-disk-budget', '32M'], { dataDir });
  const created = await daemon.cli(['org', 'create', 'before-full']);
  assert.equal(created.code, 0, created.stderr);
  const app = await daemon.cli(['create', '--type', 'node', 'kept', '--region', 'par', '--org', 'before-full'], { cwd: disk!.root });
  assert.equal(app.code, 0, app.stderr);
});

after(async () => {
  if (needsRoot) return;
  if (disk) rmSync(filler(), { force: true });
  try {
    await daemon?.stop();
  } finally {
    disk?.remove();
  }
});

function fillDisk(): void {
  // dd stops at ENOSPC having written all it could: that is the point.
  spawnSync('dd', ['if=/dev/zero', `of=${filler()}`, 'bs=1M', 'status=none'], { stdio: 'ignore' });
  spawnSync('dd', ['if=/dev/zero', `of=${filler()}`, 'bs=1k', 'oflag=append', 'conv=notrunc', 'status=none'], { stdio: 'ignore' });
  spawnSync('sync');
}

test('below the free-disk reserve a platform backup is refused; status and /metrics show free space and reserve', {
  skip: needsRoot,
}, async () => {
  const d = daemon!;
  const GiB = 1024 * 1024 * 1024;
  // The whole 128 MiB filesystem is below the default reserve of 1 GiB.
  const backup = await d.cli(['system', 'backup', '--to', join(disk!.mountPoint, 'backups')]);
  assert.notEqual(backup.code, 0, backup.stdout);
  assert.match(
    backup.stderr,
    /The platform backup was refused: the data folder's disk \(.+\) has [\d.]+ MiB free, below the reserve of 1 GiB\./,
  );
  assert.match(backup.stderr, /Running apps keep serving\. Free space on that disk/);

  const status = await d.cli(['system', 'status']);
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, /data folder's disk .+: [\d.]+ MiB free, reserve 1 GiB \(below: builds and backups refused\)/);
  const json = JSON.parse((await d.cli(['system', 'status', '--format', 'json'])).stdout) as {
    min_free_bytes: number;
    disks: Array<{ path: string; free_bytes: number }>;
  };
  assert.equal(json.min_free_bytes, GiB);
  const data = json.disks.find((disk) => disk.path === d.dataDir);
  assert.ok(data && data.free_bytes > 0 && data.free_bytes < 128 * 1024 * 1024, JSON.stringify(json));

  const metrics = await (await fetch(`${d.apiUrl}/metrics`, { headers: { authorization: `Bearer ${d.adminToken}` } })).text();
  assert.match(metrics, new RegExp(`slipway_disk_free_bytes\\{path="${d.dataDir}"\\} \\d+`));
  assert.match(metrics, new RegExp(`slipway_disk_reserve_bytes ${GiB}\\b`));
});

test('a full data disk refuses writes clearly, keeps reads and the store whole, and recovers once freed', { skip: needsRoot }, async () => {
  const d = daemon!;
  fillDisk();
  assert.equal(disk!.freeBytes(), 0);

  for (const args of [
    ['org', 'create', 'while-full'],
    ['create', '--type', 'node', 'while-full-app', '--region', 'par', '--org', 'before-full'],
    ['env', 'set', 'A', '1', '--app', 'kept'],
  ]) {
    const result = await d.cli(args, { timeoutMs: 30_000, cwd: disk!.root });
    assert.notEqual(result.code, 0, `${args.join(' ')} must be refused on a full disk:\n${result.stdout}`);
    assert.match(result.stderr, /disk is full|below the reserve/, result.stderr);
    assert.match(result.stderr, /Free space on that disk/, result.stderr);
    assert.doesNotMatch(result.stderr, /\n\s+at .+:\d+:\d+/, 'no stack trace');
  }
  const whoami = await d.cli(['whoami']);
  assert.equal(whoami.code, 0, whoami.stderr);
  const orgs = await d.cli(['org', 'list']);
  assert.equal(orgs.code, 0, orgs.stderr);
  assert.match(orgs.stdout, /before-full/);
  assert.doesNotMatch(orgs.stdout, /while-full/);
  const apps = await d.cli(['applications'], { cwd: disk!.root });
  assert.equal(apps.code, 0, apps.stderr);
  assert.match(apps.stdout, /kept/);
  assert.doesNotMatch(apps.stdout, /while-full-app/);

  rmSync(filler());
  const again = await d.cli(['org', 'create', 'after-full']);
  assert.equal(again.code, 0, again.stderr);
  assert.match((await d.cli(['org', 'list'])).stdout, /after-full/);

  const db = new Database(join(d.dataDir, 'slipway.db'), { readonly: true });
  try {
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
  } finally {
    db.close();
  }
});
