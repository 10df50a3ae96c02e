/**
 * A Redis add-on's server as its tenant and the host's other users meet it, through the CLI of
 * one daemon: a local user of the host other than root (`nobody`) is refused the port on
 * loopback and on the gateway while it reaches another port; a backup and its verification
 * pass, the throw-away server that checks it running as the add-on's own server user in a
 * control group of its own, gone afterwards; the linked app (a one-off command in its sandbox)
 * reaches the server and is refused Lua with a clear error, and once unlinked reaches nothing.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { respExchange } from '../../src/addons/redis/resp.js';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, createApp, deploymentLog, pushAndWait, registerSshKey } from '../support/deploy.js';
import { restoreTested } from '../support/addon-cli.js';

let daemon: TestDaemon;
let appId: string;
let cacheId: string;
let env: Record<string, string>;

/**
 * Speaks RESP from inside the app's one-off sandbox with the variables the app received (or,
 * once they are gone, the address given); prints each reply line.
 */
const APP_CLIENT = `
const [host, port, password] = [process.argv[1] ?? process.env.REDIS_HOST, process.argv[2] ?? process.env.REDIS_PORT, process.argv[3] ?? process.env.REDIS_PASSWORD];
const s = require('net').connect(+port, host);
const cmd = (...a) => '*' + a.length + '\\r\\n' + a.map((x) => '$' + Buffer.byteLength(x) + '\\r\\n' + x + '\\r\\n').join('');
s.setTimeout(3000, () => { console.log('timeout'); s.destroy(); });
s.on('connect', () => s.write(cmd('AUTH', password) + cmd('PING') + cmd('EVAL', 'return 1', '0') + cmd('QUIT')));
let out = '';
s.on('data', (d) => (out += d));
s.on('close', () => out && console.log(out.trim()));
s.on('error', (e) => console.log('error ' + e.code));
`;

async function cliJson<T>(args: string[]): Promise<T> {
  const result = await daemon.cli([...args, '--format', 'json'], { timeoutMs: 600_000 });
  assert.equal(result.code, 0, `slipway ${args.join(' ')} failed:\n${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

async function fromApp(...target: string[]): Promise<string[]> {
  const run = await daemon.cli(['run', '--app', appId, '--', 'node', '-e', APP_CLIENT, ...target], { timeoutMs: 60_000 });
  assert.equal(run.code, 0, run.stderr);
  return run.stdout.trim().split(/\r?\n/);
}

/** A TCP connection opened as `nobody` on the host (bash's /dev/tcp): 'connected' or what bash said. */
function asNobody(host: string, port: number): string {
  const r = spawnSync(
    'setpriv',
    ['--reuid=65534', '--regid=65534', '--clear-groups', '/bin/bash', '-c', `exec 3<>/dev/tcp/${host}/${port} && echo connected`],
    { encoding: 'utf8', timeout: 10_000 },
  );
  return r.stdout.trim() || r.stderr.trim();
}

/** Redis servers started from the backups' scratch folder, as /proc shows them: uid and control group. */
function scratchServers(): Array<{ pid: number; uid: number; cgroup: string }> {
  const found: Array<{ pid: number; uid: number; cgroup: string }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (!argv[0]?.endsWith('redis-server') || !argv.some((a) => a.includes(`${daemon.dataDir}/backup-scratch/`))) continue;
      const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1]);
      const cgroup = readFileSync(`/proc/${entry}/cgroup`, 'utf8');
      found.push({ pid: Number(entry), uid, cgroup });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

before(async () => {
  daemon = await startDaemon();
  const { gitEnv } = await registerSshKey(daemon);
  const dir = checkoutExample('node-hello');
  appId = await createApp(daemon, dir, 'shop');
  cacheId = (await cliJson<{ id: string }>(['addon', 'create', 'redis', 'cache', '--link', appId])).id;
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
  const list = await cliJson<Array<{ name: string; value: string }>>(['addon', 'env', 'cache']);
  env = Object.fromEntries(list.map((v) => [v.name, v.value]));
});

after(async () => {
  await daemon?.stop();
});

test("another local user of the host cannot open the add-on's port; root (the daemon) can", async () => {
  const port = Number(env.REDIS_PORT);
  for (const host of ['127.0.0.1', env.REDIS_HOST!]) {
    assert.match(asNobody(host, port), /Connection refused/, `nobody reaches ${host}:${port}`);
  }
  // Positive control: nobody opens other ports of the host (the daemon's API).
  assert.equal(asNobody('127.0.0.1', daemon.apiPort), 'connected');
  assert.deepEqual(await respExchange('127.0.0.1', port, [['AUTH', env.REDIS_PASSWORD!], ['PING']]), ['OK', 'PONG']);
});

test("a backup and its verification pass, the throw-away copy running as the add-on's user in a group of its own", async () => {
  // Enough keys (300,000) that each throw-away server lives for a good part of a second loading
  // them: the watch below samples /proc, and a server holding one key came and went between samples.
  const batches = Array.from({ length: 30 }, (_, b) => ['MSET', ...Array.from({ length: 10_000 }, (_, k) => [`k${b}:${k}`, 'v']).flat()]);
  await respExchange(
    '127.0.0.1',
    Number(env.REDIS_PORT),
    [['AUTH', env.REDIS_PASSWORD!], ['SET', 'greeting', 'hello'], ...batches],
    30_000,
  );
  const livePid = Number(readFileSync(join(daemon.dataDir, 'redis', cacheId, 'redis.pid'), 'utf8'));
  const liveUid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${livePid}/status`, 'utf8'))?.[1]);
  assert.ok(liveUid > 0);

  const seen = new Map<number, { uid: number; cgroup: string }>();
  const watch = setInterval(() => {
    for (const s of scratchServers()) seen.set(s.pid, s);
  }, 10);
  try {
    const taken = await daemon.cli(['addon', 'backup', 'cache'], { timeoutMs: 600_000 });
    assert.equal(taken.code, 0, taken.stderr);
    const id = taken.stdout.trim();
    const backup = await restoreTested(daemon, 'cache', id);
    assert.equal(backup.verification, 'verified', backup.verification_detail);
    const verify = await daemon.cli(['addon', 'backup', 'verify', 'cache', id], { timeoutMs: 600_000 });
    assert.equal(verify.code, 0, verify.stderr);
  } finally {
    clearInterval(watch);
  }
  assert.ok(seen.size > 0, 'a throw-away server was seen');
  for (const { uid, cgroup } of seen.values()) {
    assert.equal(uid, liveUid, "the throw-away server ran as the add-on's server user");
    assert.match(cgroup, /-addons\/redis-[0-9a-f-]+-s[0-9a-f]{8}\/run$/m, 'in a control group of its own');
  }
  const v1 = existsSync('/sys/fs/cgroup/memory/cgroup.procs');
  const groups = join('/sys/fs/cgroup', v1 ? 'memory' : '', `slipway${daemon.subnet.split('.')[1]}-addons`);
  assert.deepEqual(
    readdirSync(groups).filter((name) => /-s[0-9a-f]{8}$/.test(name)),
    [],
    'the throw-away groups are gone',
  );
});

test('the linked app reaches its Redis, and Lua is refused with a clear error; once unlinked it reaches nothing', async () => {
  assert.deepEqual(await fromApp(), ['+OK', '+PONG', "-NOPERM this user has no permissions to run the 'eval' command", '+OK']);
  const providers = await daemon.cli(['addon', 'providers']);
  assert.match(providers.stdout, /Lua scripting off/);
  const unlinked = await daemon.cli(['service', 'unlink-addon', 'cache', '--app', appId]);
  assert.equal(unlinked.code, 0, unlinked.stderr);
  assert.deepEqual(await fromApp(env.REDIS_HOST!, env.REDIS_PORT!, env.REDIS_PASSWORD!), ['timeout']);
});
