import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisProvider } from '../../addons/redis/redis-provider.js';
import { respExchange, type RespReply } from '../../addons/redis/resp.js';
import type { AddonBackupRow } from '../../store/addon-backups.js';
import { type EngineAddon, RestoreLeftChanges, type TakenBackup } from '../engine.js';
import { FolderBackupStore } from '../store/folder-store.js';
import { RedisBackups } from './redis-backups.js';

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
  let provider: RedisProvider;
  let backups: RedisBackups;
  const logged: string[] = [];

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'slipway-redis-backups-'));
    await chmod(dataDir, 0o755);
    provider = new RedisProvider({ dataDir, gatewayAddress: '127.0.0.1', portRange: [17680, 17689] });
    await provider.start();
    const store = await FolderBackupStore.open(join(dataDir, 'backups'));
    backups = new RedisBackups({ servers: provider, store, scratchRoot: join(dataDir, 'backup-scratch'), log: (l) => logged.push(l) });
  });

  after(async () => {
    await provider?.stop();
    // Deleted add-ons take their server users with them.
    for (const id of ['addon_midway', 'addon_miscount']) await provider?.deprovision({ id }, {});
    await rm(dataDir, { recursive: true, force: true });
  });

  async function addon(id: string): Promise<EngineAddon> {
    const { config } = await provider.provision({ id, name: id });
    return { id, name: id, config };
  }

  async function redis(on: EngineAddon, ...commands: string[][]): Promise<RespReply[]> {
    const replies = await respExchange('127.0.0.1', Number(on.config.port), [['AUTH', on.config.password!], ...commands], 10_000);
    assert.equal(replies[0], 'OK');
    return replies.slice(1);
  }

  test('a restore that fails after the add-on was emptied puts the safety backup back, and says so', async () => {
    const cache = await addon('addon_midway');
    const value = 'x'.repeat(1024);
    await redis(cache, ...Array.from({ length: 3000 }, (_, i) => ['SET', `big:${i}`, value]));
    const [big] = await backups.take([{ addon: cache, backupId: 'backup_big' }]);
    assert.deepEqual(big!.counts, { keys: 3000 });
    assert.equal(await backups.verify(row('backup_big', cache, big!)), 'loaded by redis-server; 3000 keys as counted');

    await redis(cache, ['FLUSHALL'], ['SET', 'small', '1'], ['SET', 'small2', '2', 'EX', '3600']);
    const [safety] = await backups.take([{ addon: cache, backupId: 'backup_safety' }]);
    assert.deepEqual(safety!.counts, { keys: 2 });
    // Room for the two small keys, not for the 3000 big ones: RESTORE is refused (OOM) midway.
    const [info] = await redis(cache, ['INFO', 'memory']);
    const used = Number(/^used_memory:(\d+)/m.exec(String(info))![1]);
    await redis(cache, ['CONFIG', 'SET', 'maxmemory', String(used + 512 * 1024)]);
    try {
      await assert.rejects(
        backups.restoreInPlace({ backup: row('backup_big', cache, big!) }, cache, row('backup_safety', cache, safety!)),
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
    } finally {
      await redis(cache, ['CONFIG', 'SET', 'maxmemory', '0']);
    }
    const [keys, ttl] = await redis(cache, ['KEYS', '*'], ['TTL', 'small2']);
    assert.deepEqual((keys as string[]).sort(), ['small', 'small2']);
    assert.ok(Number(ttl) > 3500, 'the TTL came back with the key');
    assert.ok(logged.some((l) => /failed midway .* its safety backup backup_safety was put back/.test(l)));
    assert.deepEqual(await readdir(join(dataDir, 'backup-scratch')), [], 'no throw-away server is left behind');
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
