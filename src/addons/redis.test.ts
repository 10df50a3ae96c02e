import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { execFileSync, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisProvider } from './redis/redis-provider.js';
import { RespError, respExchange } from './redis/resp.js';
import { ServerProcess } from './server-process.js';
import { readPidFile } from '../executor/pid-file.js';
import { DEFAULT_PLAN_LIMITS } from './plan-limits.js';
import { groupLimits, redisGroupName, sandboxedArgv } from './redis/server-sandbox.js';
import { pidAlive } from '../executor/pid-alive.js';
import { ensureSystemUser } from './system-user.js';
import { waitUntil } from '../../test/support/wait.js';
import { startInstanceNetwork, type TestInstanceNetwork } from '../../test/support/instance-network.js';

describe('redis add-on provider with real redis-server processes', {
  skip: process.getuid?.() !== 0 && 'needs root (server user, instance network)',
}, () => {
  let dataDir: string;
  let provider: RedisProvider;
  let network: TestInstanceNetwork;
  let blocker: Server;
  const range: [number, number] = [17640, 17649];

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'slipway-redis-test-'));
    await chmod(dataDir, 0o755);
    network = await startInstanceNetwork('r');
    // As after a kill -9 of the daemon: the bridge holds the gateway but has no carrier.
    await network.leaveWithoutPort();
    // Another program holds the first port of the range: allocation must skip it.
    blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(range[0], '127.0.0.1', resolve));
    provider = new RedisProvider({ dataDir, gatewayAddress: network.gateway, portRange: range });
  });

  after(async () => {
    await provider?.stop();
    // Every add-on of these tests ends deleted: its server user goes with it.
    for (const id of ['r1', 'r2', 'r3']) await provider?.deprovision({ id }, {});
    blocker?.close();
    await network?.remove();
    await rm(dataDir, { recursive: true, force: true });
  });

  let config: Record<string, string>;
  let env: Record<string, string>;
  let other: Record<string, string>;

  test('provision starts a password-protected server reachable at the injected address', async () => {
    await provider.start();
    const began = Date.now();
    config = (await provider.provision({ id: 'r1', name: 'cache' })).config;
    console.log(`redis provision (process start until PONG) ${Date.now() - began} ms`);
    env = provider.env(config);
    assert.equal(env.REDIS_HOST, network.gateway);
    assert.equal(env.REDIS_PORT, String(range[0] + 1), 'the busy first port was skipped');
    assert.match(env.REDIS_PASSWORD!, /^[0-9a-f]{48}$/);
    assert.equal(env.REDIS_URL, `redis://:${env.REDIS_PASSWORD}@${network.gateway}:${env.REDIS_PORT}`);

    const url = new URL(env.REDIS_URL!);
    const replies = await respExchange(url.hostname, Number(url.port), [
      ['AUTH', decodeURIComponent(url.password)],
      ['SET', 'greeting', 'hello'],
      ['GET', 'greeting'],
    ]);
    assert.deepEqual(replies, ['OK', 'OK', 'hello']);
    // Also on loopback, for the host itself.
    assert.deepEqual(
      await respExchange('127.0.0.1', Number(env.REDIS_PORT), [
        ['AUTH', env.REDIS_PASSWORD!],
        ['GET', 'greeting'],
      ]),
      ['OK', 'hello'],
    );
  });

  test('runs as an unprivileged user and keeps the password off the command line', async () => {
    const pid = await readPidFile(join(dataDir, 'redis', 'r1', 'redis.pid'));
    assert.ok(pid && pidAlive(pid));
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const uid = Number(/^Uid:\s+(\d+)/m.exec(status)![1]);
    assert.notEqual(uid, 0);
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8');
    assert.ok(!cmdline.includes(env.REDIS_PASSWORD!));
    assert.equal((await stat(join(dataDir, 'redis', 'r1', 'redis.conf'))).mode & 0o777, 0o600);
  });

  test('without the password, or with a wrong one, commands are refused', async () => {
    const port = Number(env.REDIS_PORT);
    const [noAuth] = await respExchange(network.gateway, port, [['GET', 'greeting']]);
    assert.ok(noAuth instanceof RespError && noAuth.message.startsWith('NOAUTH'), String(noAuth));
    const [wrong, after] = await respExchange(network.gateway, port, [
      ['AUTH', 'wrong'],
      ['GET', 'greeting'],
    ]);
    assert.ok(wrong instanceof RespError && /WRONGPASS/.test(wrong.message));
    assert.ok(after instanceof RespError && after.message.startsWith('NOAUTH'));
  });

  test('apps cannot move the data folder through CONFIG SET', async () => {
    const [, reply] = await respExchange('127.0.0.1', Number(env.REDIS_PORT), [
      ['AUTH', env.REDIS_PASSWORD!],
      ['CONFIG', 'SET', 'dir', '/tmp'],
    ]);
    assert.ok(reply instanceof RespError, 'CONFIG SET dir must be refused');
  });

  test('two add-ons get two servers with separate data', async () => {
    other = provider.env((await provider.provision({ id: 'r2', name: 'other' })).config);
    assert.notEqual(other.REDIS_PORT, env.REDIS_PORT);
    const replies = await respExchange(network.gateway, Number(other.REDIS_PORT), [
      ['AUTH', other.REDIS_PASSWORD!],
      ['GET', 'greeting'],
    ]);
    assert.deepEqual(replies, ['OK', null]);
    const [crossAuth] = await respExchange(network.gateway, Number(other.REDIS_PORT), [['AUTH', env.REDIS_PASSWORD!]]);
    assert.ok(crossAuth instanceof RespError);
  });

  test('data survives stop and resume (a daemon restart)', async () => {
    const pid = await readPidFile(join(dataDir, 'redis', 'r1', 'redis.pid'));
    await provider.stop();
    assert.equal(pidAlive(pid!), false, 'stop ended the process');
    await assert.rejects(respExchange('127.0.0.1', Number(env.REDIS_PORT), [['PING']]));

    const restarted = new RedisProvider({ dataDir, gatewayAddress: network.gateway, portRange: range });
    provider = restarted;
    await restarted.start();
    const began = Date.now();
    await restarted.resume({ id: 'r1' }, config);
    console.log(`redis resume ${Date.now() - began} ms`);
    const replies = await respExchange(network.gateway, Number(env.REDIS_PORT), [
      ['AUTH', env.REDIS_PASSWORD!],
      ['GET', 'greeting'],
    ]);
    assert.deepEqual(replies, ['OK', 'hello']);
  });

  test('apps cannot run Lua, nor undo the rules or the settings', async () => {
    const replies = await respExchange('127.0.0.1', Number(env.REDIS_PORT), [
      ['AUTH', env.REDIS_PASSWORD!],
      ['EVAL', 'return 1', '0'],
      ['FCALL_RO', 'f', '0'],
      ['SCRIPT', 'LOAD', 'return 1'],
      ['ACL', 'SETUSER', 'default', '+@all'],
      ['CONFIG', 'SET', 'sanitize-dump-payload', 'no'],
      ['CONFIG', 'GET', 'sanitize-dump-payload'],
    ]);
    assert.equal(replies[0], 'OK');
    for (const refused of replies.slice(1, 6)) {
      assert.ok(refused instanceof RespError && /^NOPERM this user has no permissions to run the '/.test(refused.message), String(refused));
    }
    assert.deepEqual(replies[6], ['sanitize-dump-payload', 'yes']);
  });

  test('a server left running by a crashed daemon is adopted on resume, and restarted when the plan changed', async () => {
    const file = join(dataDir, 'redis', 'r1', 'redis.pid');
    const pid = await readPidFile(file);
    await provider.detach();
    const successor = new RedisProvider({ dataDir, gatewayAddress: network.gateway, portRange: range });
    await successor.start();
    await successor.resume({ id: 'r1' }, config);
    assert.equal(await readPidFile(file), pid, 'same process, no second server');
    // A new add-on must get neither r1's port nor that of r2, which is stopped and not resumed.
    const fresh = successor.env((await successor.provision({ id: 'r3', name: 'fresh' })).config);
    assert.notEqual(fresh.REDIS_PORT, env.REDIS_PORT);
    assert.notEqual(fresh.REDIS_PORT, other.REDIS_PORT);
    await successor.deprovision({ id: 'r3' }, {});
    await successor.detach();

    // The operator turned Lua on meanwhile: the next daemon restarts the server with it.
    const withLua = new RedisProvider({
      dataDir,
      gatewayAddress: network.gateway,
      portRange: range,
      limits: { ...DEFAULT_PLAN_LIMITS.redis, scripting: true },
    });
    await withLua.start();
    await withLua.resume({ id: 'r1' }, config);
    const relaunched = await readPidFile(file);
    assert.notEqual(relaunched, pid, 'restarted with the new plan');
    assert.equal(pidAlive(pid!), false);
    const eval1 = await respExchange('127.0.0.1', Number(env.REDIS_PORT), [
      ['AUTH', env.REDIS_PASSWORD!],
      ['EVAL', 'return 1', '0'],
      ['GET', 'greeting'],
    ]);
    assert.deepEqual(eval1, ['OK', 1, 'hello'], 'Lua on, data kept');
    await withLua.detach();

    // And off again under the default plan.
    provider = new RedisProvider({ dataDir, gatewayAddress: network.gateway, portRange: range });
    await provider.start();
    await provider.resume({ id: 'r1' }, config);
    assert.notEqual(await readPidFile(file), relaunched);
    const [, refused] = await respExchange('127.0.0.1', Number(env.REDIS_PORT), [
      ['AUTH', env.REDIS_PASSWORD!],
      ['EVAL', 'return 1', '0'],
    ]);
    assert.ok(refused instanceof RespError && refused.message.startsWith('NOPERM'), String(refused));
  });

  test('a server of the previous version in its sandbox takes the rules live, without a restart', async () => {
    await provider.stop();
    // What the previous version started: its own user and group, but requirepass, Lua on and
    // no sanitize-dump-payload.
    const dir = join(dataDir, 'redis', 'r1');
    const conf = join(dir, 'redis.conf');
    const legacy = (await readFile(conf, 'utf8'))
      .replace(/^user default .*$/m, `requirepass "${env.REDIS_PASSWORD}"`)
      .replace(/^sanitize-dump-payload yes\n/m, '');
    await writeFile(conf, legacy);
    const group = redisGroupName('r1');
    provider.cgroups.create(group, groupLimits(DEFAULT_PLAN_LIMITS.redis));
    const old = await ServerProcess.spawn('the previous version', {
      argv: sandboxedArgv(await provider.serverUserOf('r1'), ['/usr/bin/redis-server', conf]),
      cwd: dir,
      logFile: join(dir, 'redis.log'),
      cgroupProcs: provider.cgroups.processGroup(group),
    });
    await waitUntilAnswers(Number(env.REDIS_PORT), env.REDIS_PASSWORD!);
    const before = await respExchange('127.0.0.1', Number(env.REDIS_PORT), [
      ['AUTH', env.REDIS_PASSWORD!],
      ['EVAL', 'return 1', '0'],
    ]);
    assert.deepEqual(before, ['OK', 1], 'the previous version ran Lua');

    const upgraded = new RedisProvider({ dataDir, gatewayAddress: network.gateway, portRange: range });
    provider = upgraded;
    await upgraded.start();
    await upgraded.resume({ id: 'r1' }, config);
    assert.equal(await readPidFile(join(dir, 'redis.pid')), old.pid, 'the same process, not restarted');
    const after = await respExchange('127.0.0.1', Number(env.REDIS_PORT), [
      ['AUTH', env.REDIS_PASSWORD!],
      ['EVAL', 'return 1', '0'],
      ['CONFIG', 'GET', 'sanitize-dump-payload'],
      ['GET', 'greeting'],
    ]);
    assert.equal(after[0], 'OK');
    assert.ok(after[1] instanceof RespError && after[1].message.startsWith('NOPERM'), String(after[1]));
    assert.deepEqual(after.slice(2), [['sanitize-dump-payload', 'yes'], 'hello']);
  });

  test('a server of the previous version (shared user, no control group) is moved into its sandbox with its data', async () => {
    await provider.stop();
    // What a daemon of the previous version left running: the folder and the server of the one
    // shared account, outside any control group of its own.
    const dir = join(dataDir, 'redis', 'r1');
    const shared = await ensureSystemUser('slipway-redis');
    execFileSync('chown', ['-R', `${shared.uid}:${shared.gid}`, dir]);
    const old = spawn('/usr/bin/redis-server', [join(dir, 'redis.conf')], {
      cwd: dir,
      uid: shared.uid,
      gid: shared.gid,
      stdio: 'ignore',
      detached: true,
    });
    await waitUntilAnswers(Number(env.REDIS_PORT), env.REDIS_PASSWORD!);
    assert.equal(await readPidFile(join(dir, 'redis.pid')), old.pid);

    const upgraded = new RedisProvider({ dataDir, gatewayAddress: network.gateway, portRange: range });
    provider = upgraded;
    await upgraded.start();
    await upgraded.resume({ id: 'r1' }, config);
    const pid = (await readPidFile(join(dir, 'redis.pid')))!;
    assert.notEqual(pid, old.pid, 'restarted');
    assert.equal(pidAlive(old.pid!), false);
    const own = await upgraded.serverUserOf('r1');
    assert.notEqual(own.uid, shared.uid);
    assert.match(await readFile(`/proc/${pid}/status`, 'utf8'), new RegExp(`^Uid:\\s+${own.uid}\\s`, 'm'));
    assert.equal((await stat(dir)).uid, own.uid);
    assert.equal((await stat(join(dir, 'redis.conf'))).uid, own.uid);
    const replies = await respExchange('127.0.0.1', Number(env.REDIS_PORT), [
      ['AUTH', env.REDIS_PASSWORD!],
      ['GET', 'greeting'],
    ]);
    assert.deepEqual(replies, ['OK', 'hello'], 'the data came back');
  });

  test('deprovision stops the server and removes its data', async () => {
    const pid = await readPidFile(join(dataDir, 'redis', 'r1', 'redis.pid'));
    await provider.deprovision({ id: 'r1' }, config);
    assert.equal(pidAlive(pid!), false);
    await assert.rejects(stat(join(dataDir, 'redis', 'r1')), /ENOENT/);
    await assert.rejects(respExchange('127.0.0.1', Number(env.REDIS_PORT), [['PING']]));
    await provider.deprovision({ id: 'r1' }, config); // idempotent
  });

  test('hostile add-on ids never reach a path', async () => {
    await assert.rejects(provider.provision({ id: '../../etc', name: 'x' }), /cannot name a folder/);
  });

  test('no redis-server of this test is left running', async () => {
    await provider.stop();
    const left = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes('redis-server') && line.includes(':1764'));
    assert.deepEqual(left, []);
  });
});

async function waitUntilAnswers(port: number, password: string): Promise<void> {
  await waitUntil(
    `an answer on ${port}`,
    async () => (await respExchange('127.0.0.1', port, [['AUTH', password], ['PING']]))[1] === 'PONG',
    10_000,
  );
}
