import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { link, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RespError } from '../../addons/redis/resp.js';
import { restoreCommand } from './copy-keys.js';
import { keyspace, loadedKeys, loadFailure, parseInfo, saveState, totalKeys } from './redis-info.js';
import { snapshotKey } from './redis-backups.js';
import { scratchRedisArgv } from './scratch-redis.js';
import { bgsaveAnswer, openOwnFile, snapshotCommands } from './snapshot.js';

const PERSISTENCE = [
  '# Persistence',
  'loading:0',
  'async_loading:0',
  'rdb_changes_since_last_save:3',
  'rdb_bgsave_in_progress:0',
  'rdb_last_save_time:1795706019',
  'rdb_last_bgsave_status:ok',
  'rdb_saves:2',
  'rdb_last_load_keys_expired:1',
  'rdb_last_load_keys_loaded:2',
  'aof_enabled:1',
  'aof_rewrite_in_progress:0',
  '',
].join('\r\n');

test('INFO is read field by field; the key count is the sum over every database', () => {
  const info = parseInfo('# Keyspace\r\ndb0:keys=2,expires=1,avg_ttl=1450\r\ndb3:keys=1,expires=0,avg_ttl=0\r\n');
  assert.deepEqual(
    [...keyspace(info)],
    [
      [0, 2],
      [3, 1],
    ],
  );
  assert.equal(totalKeys(info), 3, 'DBSIZE would say 2: it counts database 0 only');
  assert.equal(totalKeys(parseInfo('# Keyspace\r\n')), 0, 'an empty server lists no database');
});

test('INFO persistence says where the snapshot stands and what a load held', () => {
  const info = parseInfo(PERSISTENCE);
  assert.deepEqual(saveState(info), {
    inProgress: false,
    lastStatus: 'ok',
    saves: 2,
    lastSave: 1795706019,
    otherChild: false,
    loading: false,
  });
  assert.deepEqual(loadedKeys(info), { loaded: 2, expired: 1 });
  const busy = parseInfo(
    PERSISTENCE.replace('rdb_bgsave_in_progress:0', 'rdb_bgsave_in_progress:1').replace(
      'aof_rewrite_in_progress:0',
      'aof_rewrite_in_progress:1',
    ),
  );
  assert.equal(saveState(busy).inProgress, true);
  assert.equal(saveState(busy).otherChild, true);
  assert.throws(() => saveState(parseInfo('loading:0\r\n')), /no rdb_bgsave_in_progress: this redis-server is older than slipway needs/);
  assert.throws(() => loadedKeys(parseInfo('loading:0\r\n')), /does not say how many keys were loaded/);
});

test("a snapshot that does not load is told in redis-server's words, without its banner", () => {
  const log = [
    '15725:C 26 Nov 2026 15:16:00.125 # oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo',
    '15725:C 26 Nov 2026 15:16:00.125 # Redis version=7.0.15, bits=64, commit=00000000, modified=0, pid=15725, just started',
    '15725:C 26 Nov 2026 15:16:00.125 # Configuration loaded',
    '15725:M 26 Nov 2026 15:16:00.126 * Running mode=standalone, port=0.',
    '15725:M 26 Nov 2026 15:16:00.126 # Server initialized',
    '15725:M 26 Nov 2026 15:16:00.126 # WARNING Memory overcommit must be enabled! Without it, a background save may fail.',
    '15725:M 26 Nov 2026 15:16:00.127 * Loading RDB produced by version 7.0.15',
    '15725:M 26 Nov 2026 15:16:00.127 # Short read or OOM loading DB. Unrecoverable error, aborting now.',
    '15725:M 26 Nov 2026 15:16:00.127 # Internal error in RDB reading offset 0, function at rdb.c:3249 -> Unexpected EOF reading RDB file',
    '[offset 0] Checking RDB file dump.rdb',
    "[offset 27] AUX FIELD redis-ver = '7.0.15'",
    '--- RDB ERROR DETECTED ---',
    '[offset 80] Unexpected EOF reading RDB file',
    '[additional info] While doing: read-type',
    '[info] 0 keys read',
  ].join('\n');
  assert.equal(
    loadFailure(log),
    'Short read or OOM loading DB. Unrecoverable error, aborting now. / ' +
      'Internal error in RDB reading offset 0, function at rdb.c:3249 -> Unexpected EOF reading RDB file / ' +
      '[offset 80] Unexpected EOF reading RDB file',
  );
  assert.equal(
    loadFailure('1:C 26 Nov 2026 15:16:00.125 # oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo\n'),
    'it exited without saying why',
  );
});

test('the snapshot is started with writes paused around the count and the fork, and BGSAVE answers are told apart', () => {
  assert.deepEqual(snapshotCommands(), [
    ['CLIENT', 'PAUSE', '10000', 'WRITE'],
    ['INFO', 'persistence'],
    ['INFO', 'keyspace'],
    ['BGSAVE'],
    ['CLIENT', 'UNPAUSE'],
  ]);
  assert.equal(bgsaveAnswer('Background saving started'), 'started');
  assert.equal(bgsaveAnswer(new RespError('ERR Background save already in progress')), 'busy');
  assert.equal(bgsaveAnswer(new RespError("ERR Another child process is active (AOF?): can't BGSAVE right now.")), 'busy');
  // Inside MULTI, Redis 7 only schedules it: the fork would not be at the count.
  assert.match(String(bgsaveAnswer('Background saving scheduled')), /instead of starting it/);
  assert.match(String(bgsaveAnswer(new RespError('NOPERM this user has no permissions'))), /Redis refused BGSAVE: NOPERM/);
});

test('the throw-away server runs with no network, as the server account, on a unix socket only', () => {
  const argv = scratchRedisArgv('/usr/bin/redis-server', { uid: 120, gid: 130 }, '/data/backup-scratch/redis-ab/data');
  assert.deepEqual(argv.slice(0, 9), [
    'unshare',
    '--net',
    '--',
    'setpriv',
    '--reuid=120',
    '--regid=130',
    '--clear-groups',
    '--',
    '/usr/bin/redis-server',
  ]);
  const settings = new Map<string, string>();
  for (let i = 9; i < argv.length; i += 2) settings.set(argv[i]!, argv[i + 1]!);
  assert.equal(settings.get('--port'), '0', 'no TCP listener');
  assert.equal(settings.get('--unixsocket'), '/data/backup-scratch/redis-ab/data/redis.sock');
  assert.equal(settings.get('--dir'), '/data/backup-scratch/redis-ab/data');
  assert.equal(settings.get('--appendonly'), 'no', 'it loads the RDB, not an AOF');
  assert.equal(settings.get('--save'), '', 'it writes no snapshot of its own');
  assert.ok(!argv.some((word) => /requirepass|password/i.test(word)));
});

test('each key is restored with its absolute expiry, and keys gone meanwhile are skipped', () => {
  const key = Buffer.from('k\x00');
  const payload = Buffer.from('dump');
  assert.deepEqual(restoreCommand(key, payload, -1), ['RESTORE', key, '0', payload, 'REPLACE']);
  assert.deepEqual(restoreCommand(key, payload, 1795706019123), ['RESTORE', key, '1795706019123', payload, 'REPLACE', 'ABSTTL']);
  assert.equal(restoreCommand(key, null, -2), undefined);
  assert.equal(restoreCommand(key, payload, -2), undefined, 'expired between DUMP and PEXPIRETIME');
  assert.throws(() => restoreCommand(key, payload, 'soon'), /PEXPIRETIME answered "soon"/);
});

test('snapshots are named by add-on and backup, and nothing else reaches the key', () => {
  assert.equal(snapshotKey('addon_x1', 'backup_m3x2'), 'redis/addon_x1/backup_m3x2.rdb');
  assert.throws(() => snapshotKey('../x', 'backup_1'), /cannot name a snapshot/);
  assert.throws(() => snapshotKey('addon_x1', 'b/../../c'), /cannot name a snapshot/);
});

test('the snapshot file is opened only when it is a regular file of the server account with one name', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'slipway-rdb-'));
  try {
    const uid = process.getuid?.() ?? 0;
    const file = join(dir, 'dump.rdb');
    await writeFile(file, 'REDIS0010');
    const handle = await openOwnFile(file, uid);
    await handle.close();
    await assert.rejects(openOwnFile(file, uid + 1), new RegExp(`belongs to uid ${uid}, not to the Redis server's account`));
    await link(file, join(dir, 'other'));
    await assert.rejects(openOwnFile(file, uid), /has other names \(hard links\)/);
    await rm(join(dir, 'other'));
    await rm(file);
    await symlink('/etc/passwd', file);
    await assert.rejects(openOwnFile(file, uid), /is a symbolic link, not the snapshot Redis wrote/);
    await rm(file);
    execFileSync('mkfifo', [file]);
    await assert.rejects(openOwnFile(file, uid), /is not a regular file/, 'a FIFO neither blocks nor passes');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
