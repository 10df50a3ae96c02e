import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisProvider } from '../../addons/redis/redis-provider.js';
import { respExchange, type RespReply } from '../../addons/redis/resp.js';
import type { AddonBackupRow } from '../../store/addon-backups.js';
import { type EngineAddon, RestoreLeftChanges, type TakenBackup } from '../engine.js';
import { FolderBackupStore } from '../store/folder-store.js';
import type { ObjectSum } from '../../store/backup-object-sums.js';
import { ObjectSums, SumRecordingStore } from '../object-sums.js';
import { RedisBackups, type RedisServers } from './redis-backups.js';
import { ScratchRedis } from './scratch-redis.js';
import { DEFAULT_PLAN_LIMITS } from '../../addons/plan-limits.js';

function row(id: string, addon: EngineAddon, taken: TakenBackup): AddonBackupRow {
  return {
    id,
    addon_id: addon.id,
    kind: 'manual',
    object_key: taken.objectKey,
    restore_point: null,
    created_at: taken.createdAt.toISOString(),
    finished_at: taken.finishedAt.toISOString(),
    size_bytes: taken.sizeBytes,
    counts_json: JSON.stringify(taken.counts),
    verification: 'pending',
    verification_detail: '',
    verified_at: null,
  };
}

describe('Redis backups with real redis-servers', { skip: process.getuid?.() !== 0 && 'needs root (server account, unshare)' }, () => {
  let dataDir: string;
  // A small plan (2 MiB of data), and beside it the default one for an add-on that holds more.
  let provider: RedisProvider;
  let roomy: RedisProvider;
  let backups: RedisBackups;
  const logged: string[] = [];
  const scratchGroups: Array<{ addon: string; name: string }> = [];

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'slipway-redis-backups-'));
    await chmod(dataDir, 0o755);
    const small = { ...DEFAULT_PLAN_LIMITS.redis, maxmemoryBytes: 2 * 1024 * 1024, memoryBytes: 64 * 1024 * 1024 };
    provider = new RedisProvider({ dataDir, gatewayAddress: '127.0.0.1', portRange: [17680, 17689], limits: small });
    roomy = new RedisProvider({ dataDir, gatewayAddress: '127.0.0.1', portRange: [17680, 17689] });
    await provider.start();
    await roomy.start();
    const sumsByKey = new Map<string, ObjectSum>();
    const book = {
      record: (k: string, s: ObjectSum) => sumsByKey.set(k, s),
      of: (k: string) => sumsByKey.get(k),
      forget: (k: string) => sumsByKey.delete(k),
    };
    const store = new SumRecordingStore(await FolderBackupStore.open(join(dataDir, 'backups')), book);
    const sums = new ObjectSums({ store, book, log: (l) => logged.push(l) });
    const servers: RedisServers = {
      addonDir: (id) => provider.addonDir(id),
      binary: provider.binary,
      serverUserOf: (id) => provider.serverUserOf(id),
      scratchGroup: (id) => {
        const group = provider.scratchGroup(id);
        scratchGroups.push({ addon: id, name: group.name });
        return group;
      },
    };
    backups = new RedisBackups({ servers, store, sums, scratchRoot: join(dataDir, 'backup-scratch'), log: (l) => logged.push(l) });
  });

  after(async () => {
    await roomy?.stop();
    await provider?.stop();
    // Deleted add-ons take their server users with them.
    await roomy?.deprovision({ id: 'addon_roomy' }, {});
    for (const id of ['addon_midway', 'addon_miscount', 'addon_scratch']) await provider?.deprovision({ id }, {});
    await rm(dataDir, { recursive: true, force: true });
  });

  async function addon(id: string, on = provider): Promise<EngineAddon> {
    const { config } = await on.provision({ id, name: id });
    return { id, name: id, config };
  }

  async function redis(on: EngineAddon, ...commands: string[][]): Promise<RespReply[]> {
    const replies = await respExchange('127.0.0.1', Number(on.config.port), [['AUTH', on.config.password!], ...commands], 10_000);
    assert.equal(replies[0], 'OK');
    return replies.slice(1);
  }

  test('a restore that fails after the add-on was emptied puts the safety backup back, and says so', async () => {
    // 3000 keys of 1 KiB: more than the small plan's 2 MiB, so RESTORE is refused (OOM) midway.
    const source = await addon('addon_roomy', roomy);
    const value = 'x'.repeat(1024);
    await redis(source, ...Array.from({ length: 3000 }, (_, i) => ['SET', `big:${i}`, value]));
    const [big] = await backups.take([{ addon: source, backupId: 'backup_big' }]);
    assert.deepEqual(big!.counts, { keys: 3000 });

    const cache = await addon('addon_midway');
    assert.equal(
      await backups.verify(row('backup_big', source, big!), cache),
      '1 stored object matches its SHA-256; loaded by redis-server; 3000 keys as counted',
    );
    await redis(cache, ['SET', 'small', '1'], ['SET', 'small2', '2', 'EX', '3600']);
    const [safety] = await backups.take([{ addon: cache, backupId: 'backup_safety' }]);
    assert.deepEqual(safety!.counts, { keys: 2 });
    await assert.rejects(
      backups.restoreInPlace({ backup: row('backup_big', source, big!) }, cache, row('backup_safety', cache, safety!)),
      (error) => {
        assert.ok(error instanceof RestoreLeftChanges);
        assert.match(
          error.message,
          /^RESTORE into database 0 failed: OOM .*; the add-on's keys were put back from the safety backup backup_safety/,
        );
        assert.match(error.hint, /as it was when the restore began/);
        return true;
      },
    );
    const [keys, ttl] = await redis(cache, ['KEYS', '*'], ['TTL', 'small2']);
    assert.deepEqual((keys as string[]).sort(), ['small', 'small2']);
    assert.ok(Number(ttl) > 3500, 'the TTL came back with the key');
    assert.ok(logged.some((l) => /failed midway .* its safety backup backup_safety was put back/.test(l)));
    assert.deepEqual(await readdir(join(dataDir, 'backup-scratch')), [], 'no throw-away server is left behind');
    assert.ok(scratchGroups.length >= 3 && scratchGroups.every((g) => g.addon === 'addon_midway'), JSON.stringify(scratchGroups));
    for (const { name } of scratchGroups)
      assert.equal(existsSync(join('/sys/fs/cgroup', provider.cgroups.layout === 'v1' ? 'memory' : '', name)), false, `${name} is gone`);
  });

  test("a throw-away copy runs as the add-on's server user, in a control group of its own with the plan's limits", async () => {
    const cache = await addon('addon_scratch');
    await redis(cache, ['SET', 'k', 'v']);
    const [taken] = await backups.take([{ addon: cache, backupId: 'backup_scratch' }]);
    const user = await provider.serverUserOf('addon_scratch');
    const group = provider.scratchGroup('addon_scratch');
    const copy = await ScratchRedis.load({
      scratchRoot: join(dataDir, 'backup-scratch'),
      user,
      group,
      binary: provider.binary,
      snapshot: await FolderBackupStore.open(join(dataDir, 'backups')).then((store) => store.get(taken!.objectKey)),
    });
    const groupDir = join('/sys/fs/cgroup', provider.cgroups.layout === 'v1' ? 'memory' : '', group.name);
    try {
      const status = await readFile(`/proc/${copy.pid}/status`, 'utf8');
      assert.match(status, new RegExp(`^Uid:\\s+${user.uid}\\s+${user.uid}\\s`, 'm'));
      assert.match(await readFile(`/proc/${copy.pid}/cgroup`, 'utf8'), new RegExp(`:/${group.name}/run$`, 'm'));
      const limit = provider.cgroups.layout === 'v1' ? 'memory.limit_in_bytes' : 'memory.max';
      assert.equal(Number(await readFile(join(groupDir, limit), 'utf8')), 64 * 1024 * 1024);
      assert.deepEqual(await copy.loaded(), { loaded: 1, expired: 0 });
    } finally {
      await copy.remove();
    }
    assert.equal(existsSync(groupDir), false, 'the group went with the copy');
  });

  test('a snapshot that does not hold the keys counted fails before the add-on is touched', async () => {
    const cache = await addon('addon_miscount');
    await redis(cache, ['SET', 'kept', 'yes']);
    const [taken] = await backups.take([{ addon: cache, backupId: 'backup_miscount' }]);
    const wrong = { ...row('backup_miscount', cache, taken!), counts_json: JSON.stringify({ keys: 2 }) };
    await redis(cache, ['SET', 'later', 'yes']);
    await assert.rejects(
      backups.restoreInPlace({ backup: wrong }, cache, wrong),
      /the snapshot holds 1 key, 2 were counted when it was taken/,
    );
    const [keys] = await redis(cache, ['KEYS', '*']);
    assert.deepEqual((keys as string[]).sort(), ['kept', 'later'], 'nothing was changed');
  });
});
