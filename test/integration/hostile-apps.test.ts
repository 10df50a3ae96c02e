/**
 * Tenants attacking each other and the platform, through the real product: a victim app with a
 * secret, an attacker app that tries to read, signal, write and reach what is not its own, from
 * its instance and from its build. The daemon listens on every address here, so only the
 * sandbox and the firewall stand between the attacker and the API.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import {
  checkoutExample,
  checkoutFixture,
  createApp,
  deploymentLog,
  getThroughRouter,
  gitPush,
  newRelease,
  pushAndWait,
  registerSshKey,
  waitForDeploymentOf,
  commitAll,
} from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';

const SECRET = 'victim-secret-6f1c2a9e';
let daemon: TestDaemon;
let gitEnv: NodeJS.ProcessEnv;
let victimId: string;
let victimRelease: string;
let victimAddress: string;
let attackerId: string;
let attackerDir: string;
let gateway: string;
let allTargets: string;
/** Files the attacker must not read; its own release's server.js is the probe's positive control. */
let forbiddenPaths: string[];
const OWN_FILE = 'server.js';
let redisPort: string | undefined;

async function victimServes(): Promise<void> {
  const r = await getThroughRouter(daemon, `${victimId}.localhost`);
  if (r.status !== 200) {
    const status = (await daemon.cli(['status', '--app', victimId])).stdout;
    const logs = (await daemon.cli(['logs', '--app', victimId, '--lines', '30'])).stdout;
    assert.fail(`the victim stopped serving (${r.status}):\n${status}\n${logs}`);
  }
  assert.equal(JSON.parse(r.body).greeting, SECRET, 'with its data intact');
}

async function attack(name: string): Promise<any> {
  const r = await getThroughRouter(daemon, `${attackerId}.localhost`, `/${name}`);
  assert.equal(r.status, 200, `attack ${name} answered: ${r.body}`);
  return JSON.parse(r.body);
}

function instanceAddress(log: string[]): string {
  const line = log.find((l) => /Instance \S+ started at \d+\.\d+\.\d+\.\d+:8080/.test(l));
  return /started at (\d+\.\d+\.\d+\.\d+):8080/.exec(line ?? '')![1]!;
}

before(async () => {
  daemon = await startDaemon(['--listen', '0.0.0.0']);
  ({ gitEnv } = await registerSshKey(daemon));
  const victimDir = checkoutExample('node-hello');
  victimId = await createApp(daemon, victimDir, 'victim', { GREETING: SECRET });
  newRelease(victimDir, 'victim');
  const v = await pushAndWait(daemon, victimDir, victimId, gitEnv);
  const vlog = await deploymentLog(daemon, victimId, v.id);
  assert.equal(v.state, 'OK', vlog.join('\n'));
  victimRelease = join(daemon.dataDir, 'apps', victimId, 'releases', v.id);
  victimAddress = instanceAddress(vlog);
  gateway = victimAddress.replace(/\.\d+\.\d+$/, '.0.1');

  attackerDir = checkoutFixture('hostile-attacker');
  const targets = (allTargets = [
    `${gateway}:${daemon.apiPort}`,
    `${gateway}:${daemon.sshPort}`,
    `127.0.0.1:${daemon.apiPort}`,
    `${victimAddress}:8080`,
    `${gateway}:${daemon.routerPort}`,
  ].join(','));
  forbiddenPaths = [
    join(daemon.dataDir, 'slipway.db'),
    join(daemon.dataDir, 'slipway.db-wal'),
    join(daemon.dataDir, 'admin-token'),
    join(victimRelease, 'server.js'),
    '/etc/shadow',
  ];
  const paths = [OWN_FILE, ...forbiddenPaths].join(',');
  attackerId = await createApp(daemon, attackerDir, 'attacker', {
    ATTACK_TARGETS: targets,
    ATTACK_PATHS: paths,
    LOOK_FOR_HEX: Buffer.from(SECRET).toString('hex'),
  });
  const a = await pushAndWait(daemon, attackerDir, attackerId, gitEnv);
  assert.equal(a.state, 'OK', (await deploymentLog(daemon, attackerId, a.id)).join('\n'));
});

after(async () => {
  await daemon?.stop();
});

test('the attacker runs as its own unprivileged user, in its own sandbox', async () => {
  const me = await attack('whoami');
  assert.ok(me.uid >= 2_000_000, `an app uid, not root nor a shared user: ${me.uid}`);
  assert.equal(me.ownFile, true, 'it sees its own release');
  const victimUid = statSync(victimRelease).uid;
  assert.notEqual(me.uid, victimUid, 'two apps never share a uid');
  assert.equal(statSync(victimRelease).mode & 0o777, 0o700);
});

test("other apps' processes are invisible: no environ, no cmdline, no secret", async () => {
  const seen = await attack('processes');
  assert.ok(seen.pids.length > 0 && seen.pids.length < 10, `only its own sandbox's processes: ${seen.pids}`);
  assert.ok(
    seen.cmdlines.some((c: string) => c.includes('tini')),
    'PID 1 is its own init',
  );
  assert.ok(!seen.cmdlines.some((c: string) => c.includes('slipway') || c.includes('runc')), 'no process of the platform');
  assert.equal(seen.secretSeen, false);
  const signals = await attack('signals');
  assert.ok(signals.reachable.length > 0, 'the probe works: it can signal itself');
  for (const pid of signals.reachable)
    assert.ok(signals.ownTasks.includes(pid), `it can signal only its own processes and threads (${pid})`);
  await victimServes();
});

test("the store, the admin token and the victim's release cannot be read; the system cannot be written", async () => {
  const files = (await attack('files')) as Record<string, { ok: boolean; code?: string }>;
  assert.deepEqual(Object.keys(files).sort(), [OWN_FILE, ...forbiddenPaths].sort(), 'the probe tried every path');
  assert.equal(files[OWN_FILE]?.ok, true, `it reads its own release (the probe works): ${JSON.stringify(files[OWN_FILE])}`);
  for (const path of forbiddenPaths) assert.equal(files[path]?.ok, false, `${path} must not be readable: ${JSON.stringify(files[path])}`);
  const writes = await attack('writes');
  assert.equal(writes['/usr/pwned'].code, 'EROFS');
  assert.equal(writes['/etc/pwned'].code, 'EROFS');
  assert.equal(writes['/pwned'].code, 'EROFS');
  assert.equal(writes['/tmp/fine'].ok, true, 'its private /tmp is writable');
  await victimServes();
});

test("an instance reaches neither the daemon's ports nor another instance, only the router", async () => {
  const net = await attack('network');
  assert.notEqual(net[`${gateway}:${daemon.apiPort}`], 'connected', 'API on the gateway');
  assert.notEqual(net[`${gateway}:${daemon.sshPort}`], 'connected', 'SSH on the gateway');
  assert.notEqual(net[`127.0.0.1:${daemon.apiPort}`], 'connected', 'loopback is its own');
  assert.notEqual(net[`${victimAddress}:8080`], 'connected', 'the victim directly');
  assert.equal(net[`${gateway}:${daemon.routerPort}`], 'connected', 'the router is reachable (the probe works)');
  await victimServes();
});

test("another app's add-on server cannot even be reached; the app linked to it can", async () => {
  const created = await daemon.cli(['addon', 'create', 'redis', 'victim-cache', '--link', victimId, '--format', 'json']);
  assert.equal(created.code, 0, created.stderr);
  const env = Object.fromEntries(
    (
      JSON.parse((await daemon.cli(['addon', 'env', 'victim-cache', '--format', 'json'])).stdout) as Array<{ name: string; value: string }>
    ).map((v) => [v.name, v.value]),
  );
  const redis = `${env.REDIS_HOST}:${env.REDIS_PORT}`;
  redisPort = env.REDIS_PORT;
  const targets = `${redis},${gateway}:${daemon.routerPort}`;
  assert.equal((await daemon.cli(['env', 'set', 'ATTACK_TARGETS', targets, '--app', attackerId])).code, 0);
  assert.equal((await daemon.cli(['restart', '--app', attackerId])).code, 0);
  const net = await attack('network');
  assert.equal(net[`${gateway}:${daemon.routerPort}`], 'connected', 'the probe works');
  assert.notEqual(net[redis], 'connected', "the victim's Redis is out of the attacker's reach");
  const run = await daemon.cli([
    'run',
    '--app',
    victimId,
    '--',
    'node',
    '-e',
    `require('net').connect(${env.REDIS_PORT}, ${JSON.stringify(env.REDIS_HOST)}).on('connect', () => { console.log('connected'); process.exit(0) }).on('error', (e) => { console.log(e.code); process.exit(1) })`,
  ]);
  assert.equal(run.stdout.trim(), 'connected', 'the app linked to it reaches it');
  assert.equal((await daemon.cli(['env', 'set', 'ATTACK_TARGETS', allTargets, '--app', attackerId])).code, 0);
  await victimServes();
});

test("a build reaches none of the daemon's ports nor the router", async () => {
  newRelease(attackerDir, 'probe-build');
  const r = await pushAndWait(daemon, attackerDir, attackerId, gitEnv);
  const log = await deploymentLog(daemon, attackerId, r.id);
  const probes = log.filter((l) => l.startsWith('build-probe '));
  // The probe's positive control: a server the build starts itself, on its own loopback.
  assert.ok(probes.includes('build-probe own-loopback connected'), `the probe works:\n${log.join('\n')}`);
  const targets = probes.filter((l) => !l.startsWith('build-probe own-loopback '));
  assert.equal(targets.length, 5, log.join('\n'));
  for (const line of targets) assert.doesNotMatch(line, / connected$/, line);
  await victimServes();
});

test('kill -9 of the daemon mid-build leaves no build process, no build folder, and every app serves again', async () => {
  execFileSync('git', ['-C', attackerDir, 'config', 'user.email', 't@example.invalid']);
  const pkg = JSON.parse(execFileSync('cat', [join(attackerDir, 'package.json')], { encoding: 'utf8' }));
  pkg.scripts.preinstall = 'echo slow-build-started && sleep 600';
  execFileSync('node', [
    '-e',
    `require('fs').writeFileSync(${JSON.stringify(join(attackerDir, 'package.json'))}, ${JSON.stringify(JSON.stringify(pkg))})`,
  ]);
  const commit = commitAll(attackerDir, 'slow build');
  assert.equal((await gitPush(attackerDir, `git+ssh://git@127.0.0.1:${daemon.sshPort}/${attackerId}.git`, gitEnv)).code, 0);
  const sleeping = () => spawnSync('pgrep', ['-f', '^sleep 600$']).status === 0;
  await waitUntil('the slow build to run', async () => (sleeping() ? true : undefined), 120_000);
  // The victim's Redis (from the add-on test above) runs as well: it must be adopted, not started twice.
  assert.ok(redisPort, 'the add-on test ran first');
  const redisServers = () =>
    spawnSync('pgrep', ['-f', `^/usr/bin/redis-server .*:${redisPort}$`], { encoding: 'utf8' })
      .stdout.trim()
      .split('\n')
      .filter(Boolean);
  const redisBefore = redisServers();
  assert.equal(redisBefore.length, 1, 'one Redis server runs for the add-on');
  const pid = Number(
    spawnSync('pgrep', ['-f', `server --data-dir ${daemon.dataDir}`], { encoding: 'utf8' })
      .stdout.trim()
      .split('\n')[0],
  );
  assert.ok(pid > 0, 'the daemon pid');
  process.kill(pid, 'SIGKILL');
  await new Promise((r) => setTimeout(r, 500));
  await daemon.restart();
  assert.equal(sleeping(), false, 'the build of the killed daemon was killed with its cgroup');
  assert.deepEqual(redisServers(), redisBefore, 'the add-on server was adopted: the same process, none started twice');
  assert.deepEqual(
    readdirSync(join(daemon.dataDir, 'apps', attackerId)).filter((name) => name.startsWith('build')),
    [],
    'the build folder (and the build credentials) are wiped',
  );
  const d = await waitForDeploymentOf(daemon, attackerId, commit, 30_000);
  assert.equal(d.state, 'CANCELLED');
  await waitUntil(
    'the victim to serve again',
    async () => ((await getThroughRouter(daemon, `${victimId}.localhost`)).status === 200 ? true : undefined),
    60_000,
  );
  await victimServes();
  const attackerBack = await getThroughRouter(daemon, `${attackerId}.localhost`, '/whoami');
  assert.equal(attackerBack.status, 200, 'the attacker app serves its last OK release again');
});
