import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddonManager } from '../addons/addon-manager.js';
import type { AddonBackupRow } from '../store/addon-backups.js';
import { Store } from '../store/store.js';
import { DiskReserve } from '../storage/disk-reserve.js';
import { AddonBackups, DELETED_ADDON_GRACE_DAYS } from './addon-backups.js';
import type { BackupEngine, EngineAddon, TakenBackup } from './engine.js';

/** An engine that records what it was asked and stores nothing. */
class FakeEngine implements BackupEngine {
  readonly takes: string[][] = [];
  readonly deleted: string[] = [];
  readonly kept: string[][] = [];
  readonly duringRestore = 'meanwhile';
  readonly dumpExtension: string;
  /** When a take says it happened: the real clock unless a test sets its own day. */
  clock: () => Date = () => new Date();

  constructor(
    readonly label: string,
    readonly objectPrefix: string,
    readonly toAnySecond: boolean,
    readonly takesTogether: boolean,
  ) {
    this.dumpExtension = toAnySecond ? 'dump' : 'rdb';
  }

  async take(items: Array<{ addon: EngineAddon; backupId: string }>): Promise<TakenBackup[]> {
    this.takes.push(items.map((i) => i.addon.name));
    const shared = `${this.objectPrefix}base-${this.takes.length}`;
    return items.map(({ addon, backupId }) => ({
      objectKey: this.takesTogether ? shared : `${this.objectPrefix}${addon.id}/${backupId}`,
      restorePoint: this.takesTogether ? `slipway_${backupId}` : null,
      counts: { keys: 1 },
      sizeBytes: 10,
      createdAt: this.clock(),
      finishedAt: this.clock(),
    }));
  }

  async verify(): Promise<string> {
    return 'fine';
  }

  async restoreInPlace(): Promise<void> {}
  async restoreInto(): Promise<void> {}
  async download(): Promise<void> {}

  async deleteObject(key: string): Promise<void> {
    this.deleted.push(key);
  }

  async pruned(keptKeys: string[]): Promise<void> {
    this.kept.push(keptKeys);
  }
}

function setUp(reserve?: DiskReserve) {
  const store = Store.open(':memory:');
  const org = store.orgs.create('acme');
  const addon = (provider: string, name: string) => {
    const row = store.addons.create({ orgId: org.id, provider, name });
    store.addons.setConfig(row.id, { ready: 'yes' });
    return store.addons.byId(row.id)!;
  };
  const db = addon('postgresql', 'db');
  const db2 = addon('postgresql', 'db2');
  const cache = addon('redis', 'cache');
  const sessions = addon('redis', 'sessions');
  const postgresql = new FakeEngine('PostgreSQL', 'postgresql/', true, true);
  const redis = new FakeEngine('Redis', 'redis/', false, false);
  const service = new AddonBackups({
    store,
    addons: {} as AddonManager,
    engines: new Map<string, BackupEngine>([
      ['postgresql', postgresql],
      ['redis', redis],
    ]),
    defaults: { at: '03:00', keepDays: 7 },
    log: () => undefined,
    tellApps: () => undefined,
    verified: () => undefined,
    reserve,
  });
  return { store, service, postgresql, redis, db, db2, cache, sessions };
}

function backdate(store: Store, row: AddonBackupRow, days: number, now: Date): void {
  const at = new Date(now.getTime() - days * 86_400_000).toISOString();
  store.db.prepare('UPDATE addon_backups SET created_at = ?, finished_at = ? WHERE id = ?').run(at, at, row.id);
}

test('the schedule takes one base backup for the PostgreSQL add-ons and a snapshot of each Redis add-on', async () => {
  const { store, service, postgresql, redis } = setUp();
  const now = new Date();
  now.setHours(4, 0, 0, 0);
  // The takes happen at the schedule's 04:00 too, whatever the real hour (before 03:00 they
  // would look older than today's slot).
  postgresql.clock = redis.clock = () => new Date(now);
  await service.runSchedule(now);
  assert.deepEqual(postgresql.takes, [['db', 'db2']]);
  assert.deepEqual(redis.takes, [['cache'], ['sessions']]);
  const scheduled = store.addonBackups.all().filter((b) => b.kind === 'scheduled');
  assert.equal(scheduled.length, 4);
  await service.runSchedule(now);
  assert.equal(redis.takes.length, 2, 'once a day');
});

test('retention removes the Redis snapshots of the backups it drops, never the newest verified one', async () => {
  const { store, service, redis, cache } = setUp();
  const now = new Date();
  const old = [await service.backupNow(cache), await service.backupNow(cache), await service.backupNow(cache)];
  for (const row of old) store.addonBackups.setVerification(row.id, 'verified', 'fine', now);
  backdate(store, old[0]!, 10, now);
  backdate(store, old[1]!, 9, now);
  backdate(store, old[2]!, 8, now);
  now.setHours(2, 0, 0, 0); // before the daily slot: nothing new is taken
  await service.runSchedule(now);
  const left = store.addonBackups.listForAddon(cache.id).map((b) => b.id);
  assert.deepEqual(left, [old[2]!.id], 'the newest verified one stays, however old');
  assert.deepEqual(redis.deleted.sort(), [old[0]!.object_key, old[1]!.object_key].sort());
  assert.deepEqual(redis.kept.at(-1), [old[2]!.object_key]);
});

test('a Redis add-on restores to a backup, not to a second, and has no restore window', async () => {
  const { service, cache, db } = setUp();
  await service.backupNow(cache);
  assert.equal(service.window(cache), undefined);
  await assert.rejects(
    service.restore(cache, { time: new Date() }, 'cache-then'),
    /cache is a Redis add-on: it restores to a snapshot, not to a second/,
  );
  await service.backupNow(db);
  assert.ok(service.window(db), 'PostgreSQL restores to any second of its window');
  assert.match(service.dumpFileName(cache, 'backup_1'), /^backup_1\.rdb$/);
  assert.match(service.dumpFileName(db, 'backup_1'), /^backup_1\.dump$/);
});

test('a backup is refused below the disk reserve, before the engine writes anything', async () => {
  let free = 10 * 1024 * 1024;
  const reserve = new DiskReserve(64 * 1024 * 1024, [{ label: 'backup folder', path: '/backups' }], async () => free);
  const { store, service, redis, cache } = setUp(reserve);
  await assert.rejects(service.backupNow(cache), (error: Error & { status?: number }) => {
    assert.equal(error.status, 507);
    assert.match(
      error.message,
      /The backup of add-on cache was refused: the backup folder \(\/backups\) has 10 MiB free, below the reserve of 64 MiB/,
    );
    return true;
  });
  assert.deepEqual(redis.takes, []);
  assert.equal(store.addonBackups.all().length, 0);
  free = 100 * 1024 * 1024;
  await service.backupNow(cache);
  assert.deepEqual(redis.takes, [['cache']]);
});

test("a deleted add-on's backup objects go after the grace period, not before, and never one a live backup rests on", async () => {
  const { store, service, postgresql, redis, db, db2, cache } = setUp();
  const at4 = new Date();
  at4.setHours(4, 0, 0, 0);
  postgresql.clock = redis.clock = () => new Date(at4);
  // One base backup for both PostgreSQL add-ons, a snapshot of each Redis add-on; then one of db alone.
  await service.runSchedule(at4);
  const own = await service.backupNow(db);
  const shared = store.addonBackups.listForAddon(db2.id)[0]!;
  const snapshot = store.addonBackups.listForAddon(cache.id)[0]!;
  store.addonBackups.setVerification(shared.id, 'verified', 'fine', at4);
  store.addons.remove(cache.id);
  store.addons.remove(db.id);
  assert.equal(store.addonBackups.listForAddon(cache.id).length, 0, 'the rows went with the add-on');

  await service.runSchedule(at4);
  assert.ok(!redis.deleted.includes(snapshot.object_key), 'within the grace period nothing goes');
  assert.ok(!postgresql.deleted.includes(own.object_key));
  assert.ok(postgresql.kept.at(-1)!.includes(own.object_key), 'what it rests on is kept meanwhile');

  const later = new Date(at4.getTime() + (DELETED_ADDON_GRACE_DAYS + 1) * 86_400_000);
  later.setHours(2, 0, 0, 0); // before the daily slot: nothing new is taken
  await service.runSchedule(later);
  assert.ok(redis.deleted.includes(snapshot.object_key), "the deleted Redis add-on's snapshot went");
  assert.ok(postgresql.deleted.includes(own.object_key), "db's own base backup went");
  assert.ok(!postgresql.deleted.includes(shared.object_key), 'the base backup db2 still rests on stays');
  assert.deepEqual(store.addonBackups.deletedBefore(later), []);
});

test("a download nobody reads holds its own organisation's backup jobs, not another's", async () => {
  const { store, service, redis, cache } = setUp();
  const other = store.orgs.create('other');
  const theirs = store.addons.create({ orgId: other.id, provider: 'redis', name: 'theirs' });
  store.addons.setConfig(theirs.id, { ready: 'yes' });
  const backup = await service.backupNow(cache);
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  // Its download hands the dump to the route, whose client never reads it.
  redis.download = async (...args: unknown[]) => (args[2] as (dump: never) => Promise<void>)(undefined as never);
  const download = service.download(cache, backup.id, () => held);
  // The other organisation's backup is taken while the download waits for its client.
  await service.backupNow(store.addons.byId(theirs.id)!);
  assert.deepEqual(redis.takes.at(-1), ['theirs']);
  // The same organisation's next job waits behind its download.
  let ownDone = false;
  const own = service.backupNow(cache).then(() => (ownDone = true));
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(ownDone, false);
  release();
  await Promise.all([download, own]);
});
