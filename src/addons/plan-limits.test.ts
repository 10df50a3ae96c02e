import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_PLAN_LIMITS, describePostgresqlLimits, describeRedisLimits, parsePlanLimits } from './plan-limits.js';
import { redisConf } from './redis/redis-config.js';
import { roleLimitsSql } from './postgresql/provisioning-sql.js';
import { firstFreeId, idsOf, redisUserName } from './redis/server-users.js';
import { groupLimits, redisGroupName, sandboxedArgv } from './redis/server-sandbox.js';
import { giveFolderTo } from './redis/folder-owner.js';
import { limitWrites } from '../sandbox/cgroups.js';

const MiB = 1024 * 1024;

test('the plans have limits, and SLIPWAY_ADDON_PLAN_LIMITS changes some of them', () => {
  assert.equal(parsePlanLimits(undefined), DEFAULT_PLAN_LIMITS);
  assert.deepEqual(DEFAULT_PLAN_LIMITS.redis, {
    maxmemoryBytes: 128 * MiB,
    evictionPolicy: 'noeviction',
    memoryBytes: 320 * MiB,
    pids: 64,
    scripting: false,
  });
  assert.deepEqual(DEFAULT_PLAN_LIMITS.postgresql, {
    connectionLimit: 5,
    statementTimeoutMs: 30_000,
    tempFileLimitKb: 262_144,
    databaseSizeBytes: 256 * MiB,
    memoryBytes: 256 * MiB,
    pids: 64,
  });
  const small = parsePlanLimits('{"redis":{"maxmemoryBytes":8388608,"memoryBytes":50331648},"postgresql":{"connectionLimit":3}}');
  assert.deepEqual(small.redis, {
    maxmemoryBytes: 8 * MiB,
    evictionPolicy: 'noeviction',
    memoryBytes: 48 * MiB,
    pids: 64,
    scripting: false,
  });
  assert.deepEqual(small.postgresql, { ...DEFAULT_PLAN_LIMITS.postgresql, connectionLimit: 3 });
  assert.equal(describeRedisLimits(small.redis), 'maxmemory 8 MiB (noeviction), 48 MiB of memory for the server in all, Lua scripting off');
  assert.equal(parsePlanLimits('{"redis":{"scripting":true}}').redis.scripting, true);
  assert.match(describeRedisLimits(parsePlanLimits('{"redis":{"scripting":true}}').redis), /Lua scripting on$/);
  assert.equal(
    describePostgresqlLimits(DEFAULT_PLAN_LIMITS.postgresql),
    'a server of its own with 256 MiB of memory, 5 connections, 256 MiB of data, statements up to 30 s, 256 MiB of temporary files per session',
  );
});

test('bad plan limits are refused naming the field', () => {
  assert.throws(() => parsePlanLimits('nope'), /not JSON/);
  assert.throws(() => parsePlanLimits('{"mysql":{}}'), /unknown field\(s\) mysql/);
  assert.throws(() => parsePlanLimits('{"redis":{"maxmemory":1}}'), /redis has unknown field\(s\) maxmemory/);
  assert.throws(
    () => parsePlanLimits('{"postgresql":{"connectionLimit":0}}'),
    /postgresql\.connectionLimit must be a whole number of at least 1/,
  );
  assert.throws(() => parsePlanLimits('{"redis":{"evictionPolicy":"random"}}'), /evictionPolicy must be one of noeviction/);
  assert.throws(() => parsePlanLimits('{"redis":{"scripting":"yes"}}'), /redis\.scripting must be true or false/);
  assert.throws(
    () => parsePlanLimits('{"postgresql":{"databaseSizeBytes":1048576}}'),
    /databaseSizeBytes must be a whole number of at least 16777216/,
  );
  // The control group must leave room above maxmemory, or the kernel kills what Redis would refuse.
  assert.throws(() => parsePlanLimits('{"redis":{"maxmemoryBytes":67108864,"memoryBytes":67108864}}'), /at least 16 MiB above/);
});

test('redis.conf carries maxmemory and its policy; the control group the memory and pids', () => {
  const conf = redisConf({
    bind: ['127.0.0.1'],
    port: 20000,
    password: 'p',
    dir: '/d',
    maxmemoryBytes: 8 * MiB,
    evictionPolicy: 'allkeys-lru',
  });
  assert.match(conf, /^maxmemory 8388608$/m);
  assert.match(conf, /^maxmemory-policy allkeys-lru$/m);
  assert.throws(() => redisConf({ bind: ['127.0.0.1'], port: 1, password: 'p', dir: '/d', maxmemoryBytes: 10 }), /at least 1 MiB/);
  const limits = groupLimits(DEFAULT_PLAN_LIMITS.redis);
  assert.deepEqual(
    limitWrites('v1', limits).filter((w) => w.controller !== 'cpu'),
    [
      { controller: 'memory', file: 'memory.limit_in_bytes', value: String(320 * MiB) },
      { controller: 'memory', file: 'memory.memsw.limit_in_bytes', value: String(320 * MiB) },
      { controller: 'pids', file: 'pids.max', value: '64' },
    ],
  );
  assert.deepEqual(limitWrites('v2', limits).slice(0, 3), [
    { controller: '', file: 'memory.max', value: String(320 * MiB) },
    { controller: '', file: 'memory.swap.max', value: '0' },
    { controller: '', file: 'pids.max', value: '64' },
  ]);
});

test("a role's limits: connection limit, statement timeout, and temp_file_limit only as superuser", () => {
  const limits = { ...DEFAULT_PLAN_LIMITS.postgresql, connectionLimit: 5, statementTimeoutMs: 30_000, tempFileLimitKb: 262_144 };
  assert.deepEqual(roleLimitsSql('addon_1234abcd', limits, true), [
    'ALTER ROLE "addon_1234abcd" CONNECTION LIMIT 5',
    'ALTER ROLE "addon_1234abcd" SET statement_timeout = 30000',
    'ALTER ROLE "addon_1234abcd" SET temp_file_limit = 262144',
  ]);
  assert.equal(roleLimitsSql('addon_1234abcd', limits, false).length, 2);
  assert.throws(() => roleLimitsSql('postgres', limits, true), /not a PostgreSQL add-on identifier/);
  assert.throws(() => roleLimitsSql('addon_1234abcd', { ...limits, connectionLimit: 1.5 }, true), /whole number/);
});

test("each Redis add-on's user, number and group are its own", () => {
  assert.equal(redisUserName('addon_0123abcd-4567-89ab-cdef-0123456789ab'), 'slr-0123abcd4567');
  assert.match(redisUserName('r1'), /^slr-[0-9a-f]{12}$/);
  assert.notEqual(redisUserName('r1'), redisUserName('r2'));
  assert.equal(redisGroupName('addon_0123abcd-4567-89ab-cdef-0123456789ab'), 'redis-0123abcd-4567-89ab-cdef-0123456789ab');
  assert.deepEqual(
    idsOf(['root:x:0:0::/root:/bin/sh', 'slr-a:x:2200000:2200000::/nonexistent:/usr/sbin/nologin', 'garbage']),
    new Set([0, 2200000]),
  );
  assert.equal(firstFreeId({ first: 2_200_000, last: 2_200_002 }, new Set([2_200_000, 2_200_001])), 2_200_002);
  assert.equal(firstFreeId({ first: 2_200_000, last: 2_200_001 }, new Set([2_200_000, 2_200_001])), undefined);
  assert.deepEqual(sandboxedArgv({ uid: 2_200_000, gid: 2_200_000 }, ['/usr/bin/redis-server', 'conf']), [
    'unshare',
    '--ipc',
    '--uts',
    '--',
    'setpriv',
    '--reuid=2200000',
    '--regid=2200000',
    '--clear-groups',
    '--no-new-privs',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--',
    '/usr/bin/redis-server',
    'conf',
  ]);
});

test('handing a folder from before per-add-on users over refuses symbolic links and folders outside', async () => {
  const root = await mkdtemp(join(tmpdir(), 'slipway-redis-owner-'));
  const me = { name: 'me', uid: process.getuid!(), gid: process.getgid!() };
  try {
    await mkdir(join(root, 'a', 'appendonlydir'), { recursive: true });
    await writeFile(join(root, 'a', 'appendonlydir', 'x.aof'), '');
    await giveFolderTo(root, 'a', me); // a folder as Redis makes it
    await symlink('/etc/shadow', join(root, 'a', 'dump.rdb'));
    await assert.rejects(giveFolderTo(root, 'a', me), (e: Error) => /symbolic link/.test(e.message) && !e.message.includes('shadow'));
    await symlink(tmpdir(), join(root, 'b'));
    await assert.rejects(giveFolderTo(root, 'b', me), /not a folder/);
    await assert.rejects(giveFolderTo(root, '../x', me), /Invalid add-on folder name/);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
