/**
 * Tenant isolation, attacked through the real product: a victim app A holds a secret variable
 * and a file in its release folder, and writes into its folder at each start (a layer of its
 * sandbox's own: never into the release on the host, gone at the next start); an attacker app B, deployed on the same daemon, tries from
 * its instance and from its build to read A's processes and the platform's files, to signal A,
 * to write where it must not, to reach the daemon's ports and A directly, to exhaust memory and
 * processes, and a `kill -9` of the daemon in the middle of B's build. Each attack reports what
 * it saw as JSON (test/fixtures/hostile/tenant-attacker/server.js); after each one A must still
 * answer through the router with its secret and its file intact, and the secret must never
 * appear in what B saw.
 *
 * The daemon listens on every address, so that nothing but the sandbox and the firewall stands
 * between an app and the API. Symlinks in pushed files are tested in hostile-files.test.ts.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import { dirname, join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import {
  checkoutFixture,
  commitAll,
  createApp,
  deploymentLog,
  getThroughRouter,
  gitPush,
  newRelease,
  pushAndWait,
  registerSshKey,
  waitForDeploymentOf,
} from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';

const SECRET = `victim-secret-${randomBytes(8).toString('hex')}`;
/** The default instance flavour (nano) holds at most this many tasks. */
const NANO_TASKS = 512;

let daemon: TestDaemon;
let gitEnv: NodeJS.ProcessEnv;
let gateway: string;
/** What the attacker's first build tried. */
let buildTargets: string[];
let buildPaths: string[];

const victim = { id: '', dir: '', release: '', firstRelease: '', address: '', uid: 0, data: '' };
const attacker = { id: '', dir: '', release: '', uid: 0, cwd: '', execPath: '', firstDeployment: '' };

// ---------------------------------------------------------------- helpers

/** Processes of the host (as root sees them) running as `uid`. */
function hostProcessesOf(uid: number): Array<{ pid: number; args: string }> {
  return execFileSync('ps', ['-eo', 'uid=,pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null && Number(m[1]) === uid)
    .map((m) => ({ pid: Number(m[2]), args: m[3]! }));
}

async function victimAnswer(): Promise<{ status: number; body: string }> {
  return getThroughRouter(daemon, `${victim.id}.localhost`).catch((e: Error) => ({ status: 0, body: String(e) }));
}

/** A answers through the router, with its secret and the file it wrote intact. */
async function victimServes(): Promise<void> {
  const r = await victimAnswer();
  if (r.status !== 200) {
    const status = (await daemon.cli(['status', '--app', victim.id])).stdout;
    const logs = (await daemon.cli(['logs', '--app', victim.id, '--lines', '30'])).stdout;
    assert.fail(`the victim stopped serving (${r.status} ${r.body}):\n${status}\n${logs}`);
  }
  const facts = JSON.parse(r.body) as { secret: string; data: string; uid: number; started: string; previous: string | null };
  assert.equal(facts.secret, SECRET, 'the victim keeps its secret variable');
  assert.equal(facts.data, victim.data, 'the file in its release folder is intact');
  assert.equal(facts.uid, victim.uid, 'it runs as its own user');
  assert.match(facts.started, /^started at /, 'it wrote into its own folder at its start and reads it back');
  assert.equal(facts.previous, null, 'nothing an earlier start wrote into the folder was left there');
  assert.equal(existsSync(join(victim.release, 'started.txt')), false, 'what it wrote never reached the release folder on the host');
}

/** Runs one attack of B through the router; its answer must never hold A's secret. */
async function attack<T = any>(path: string, timeoutMs = 15_000): Promise<T> {
  const r = await getThroughRouter(daemon, `${attacker.id}.localhost`, path, {}, timeoutMs);
  assert.equal(r.status, 200, `attack ${path} answered: ${r.body}`);
  assert.ok(!r.body.includes(SECRET), `the victim's secret leaked into attack ${path}`);
  assert.ok(!r.body.includes(daemon.adminToken), `the admin token leaked into attack ${path}`);
  return JSON.parse(r.body) as T;
}

const q = (values: string[]) => encodeURIComponent(values.join(','));

function instanceAddress(log: string[]): string {
  const found = log.map((l) => /Instance \S+ started at (\d+\.\d+\.\d+\.\d+):8080/.exec(l)).find((m) => m !== null);
  assert.ok(found, `the deploy log names the instance's address:\n${log.join('\n')}`);
  return found[1]!;
}

async function appServes(appId: string): Promise<true | undefined> {
  return (await getThroughRouter(daemon, `${appId}.localhost`)).status === 200 ? true : undefined;
}

/** `ip -o <args>` lines. */
function ip(args: string[]): string[] {
  return execFileSync('ip', ['-o', ...args], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
}

/** `ip -o address show` lines in namespace `ns`; none when it went away since it was listed (other lanes' tests end). */
function addressesIn(ns: string): string[] {
  try {
    return ip(['-n', ns, 'address', 'show']);
  } catch {
    return [];
  }
}

/** The IPv6 link-local address (with its scope, as seen from inside a sandbox) in `lines` of `ip -o address`. */
function linkLocalIn(lines: string[], scope: string): string | undefined {
  const m = lines.map((l) => /\sinet6 (fe80::[0-9a-f:]+)\/64 scope link/.exec(l)).find((x) => x !== null);
  return m ? `${m[1]}%${scope}` : undefined;
}

/**
 * Addresses the platform never meant an app to use, beside the obvious ones: the IPv6 link-local
 * addresses of the victim's namespace and of the bridge (a bridge passes IPv6 whatever an IPv4
 * firewall says), and the host's other addresses (the daemon listens on all of them).
 */
function sideDoors(): { victimLinkLocal?: string; gatewayLinkLocal?: string; hostAddresses: string[] } {
  const namespaces = ip(['netns', 'list']).map((l) => l.split(' ')[0]!);
  const victimNs = namespaces.find((ns) => addressesIn(ns).some((l) => l.includes(` inet ${victim.address}/`)));
  const victimLinkLocal = victimNs ? linkLocalIn(ip(['-n', victimNs, 'address', 'show', 'dev', 'eth0']), 'eth0') : undefined;
  const bridge = ip(['-4', 'address', 'show'])
    .find((l) => l.includes(` inet ${gateway}/`))
    ?.split(/\s+/)[1];
  const gatewayLinkLocal = bridge ? linkLocalIn(ip(['-6', 'address', 'show', 'dev', bridge]), 'eth0') : undefined;
  // The interface of the default route: others come and go with other tests' namespaces.
  const uplink = ip(['route', 'show', 'default'])[0]?.match(/ dev (\S+)/)?.[1];
  const hostAddresses = (uplink ? (networkInterfaces()[uplink] ?? []) : [])
    .filter((a) => !a.internal && !a.address.startsWith('fe80:'))
    .map((a) => a.address);
  return { victimLinkLocal, gatewayLinkLocal, hostAddresses };
}

/**
 * Every address where an app must not reach the daemon (API and SSH on the gateway, on its own
 * loopback, on the host's other addresses, on the bridge's link-local address) nor the victim
 * (its instance address, its link-local address).
 */
function forbiddenTargets(): string[] {
  const doors = sideDoors();
  const daemonAt = (host: string) => [`${host}:${daemon.apiPort}`, `${host}:${daemon.sshPort}`];
  const targets = [...daemonAt(gateway), ...daemonAt('127.0.0.1'), ...doors.hostAddresses.flatMap(daemonAt), `${victim.address}:8080`];
  if (doors.gatewayLinkLocal) targets.push(...daemonAt(doors.gatewayLinkLocal));
  if (doors.victimLinkLocal) targets.push(`${doors.victimLinkLocal}:8080`);
  if (!doors.victimLinkLocal || !doors.gatewayLinkLocal)
    console.log(`# no IPv6 link-local address found to attack: ${JSON.stringify(doors)}`);
  return targets;
}

/** Files of the platform and of the victim, each of which exists on the host. */
function forbiddenFiles(): string[] {
  return [
    join(daemon.dataDir, 'slipway.db'),
    join(daemon.dataDir, 'slipway.db-wal'),
    join(daemon.dataDir, 'admin-token'),
    join(victim.release, 'victim-data.txt'),
    join(victim.release, 'server.js'),
    '/etc/shadow',
  ];
}

// ---------------------------------------------------------------- one daemon, two apps

before(async () => {
  daemon = await startDaemon(['--listen', '0.0.0.0']);
  ({ gitEnv } = await registerSshKey(daemon));

  victim.dir = checkoutFixture('hostile/tenant-victim');
  victim.id = await createApp(daemon, victim.dir, 'victim', { VICTIM_SECRET: SECRET });
  const v = await pushAndWait(daemon, victim.dir, victim.id, gitEnv);
  const vlog = await deploymentLog(daemon, victim.id, v.id);
  assert.equal(v.state, 'OK', vlog.join('\n'));
  victim.release = join(daemon.dataDir, 'apps', victim.id, 'releases', v.id);
  victim.firstRelease = victim.release;
  victim.uid = statSync(victim.release).uid;
  victim.address = instanceAddress(vlog);
  victim.data = readFileSync(join(victim.dir, 'victim-data.txt'), 'utf8');
  // The bridge's gateway: the first address of the daemon's subnet (10.x.0.0/16 in tests).
  gateway = victim.address.replace(/\.\d+\.\d+$/, '.0.1');

  attacker.dir = checkoutFixture('hostile/tenant-attacker');
  buildTargets = [...forbiddenTargets(), `${gateway}:${daemon.routerPort}`];
  buildPaths = forbiddenFiles();
  attacker.id = await createApp(daemon, attacker.dir, 'attacker', {
    ATTACK_TARGETS: buildTargets.join(','),
    ATTACK_PATHS: buildPaths.join(','),
  });
  const a = await pushAndWait(daemon, attacker.dir, attacker.id, gitEnv);
  assert.equal(a.state, 'OK', (await deploymentLog(daemon, attacker.id, a.id)).join('\n'));
  attacker.firstDeployment = a.id;
  attacker.release = join(daemon.dataDir, 'apps', attacker.id, 'releases', a.id);
  await victimServes();
});

after(async () => {
  await getThroughRouter(daemon, `${attacker.id}.localhost`, '/storm-stop').catch(() => undefined);
  await daemon?.stop();
});

// ---------------------------------------------------------------- the attacks

test('the attacker runs as its own unprivileged user, without capabilities, and sees its own files (the attacks below do run)', async () => {
  const me = await attack<{
    uid: number;
    gid: number;
    groups: number[];
    cwd: string;
    execPath: string;
    ownFile: boolean;
    ownWrite: boolean;
    status: Record<string, string>;
    userNamespace: { status: number | null; error: string | null; stderr: string };
  }>('/whoami');
  attacker.uid = me.uid;
  attacker.cwd = me.cwd;
  attacker.execPath = me.execPath;
  assert.ok(me.uid >= 2_000_000, `an app's own uid, not root nor a shared user: ${me.uid}`);
  assert.notEqual(me.uid, victim.uid, 'two apps never share a uid');
  assert.deepEqual(me.groups, [me.gid], 'no supplementary group');
  assert.equal(statSync(attacker.release).uid, me.uid, 'its release folder belongs to it');
  assert.equal(me.ownFile, true, 'it sees its own release');
  assert.equal(me.ownWrite, true, 'it writes into its own release folder');
  for (const set of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb'])
    assert.match(me.status[set] ?? '', /^0+$/, `${set} is empty: ${JSON.stringify(me.status)}`);
  assert.equal(me.status.NoNewPrivs, '1', 'no_new_privs is set');
  assert.equal(me.status.Seccomp, '2', 'a seccomp filter is in place');
  assert.equal(me.userNamespace.error, null, `unshare ran: ${JSON.stringify(me.userNamespace)}`);
  assert.notEqual(me.userNamespace.status, 0, 'no new user namespace (where it would hold capabilities again)');
  assert.match(me.userNamespace.stderr, /Operation not permitted/);
  assert.equal(statSync(victim.release).mode & 0o777, 0o700, "the victim's release folder is closed to others");
  await victimServes();
});

test("the sandbox's /etc/passwd and /etc/group list the system's accounts and the attacker's own, not the victim's", async () => {
  const host = readFileSync('/etc/passwd', 'utf8');
  assert.match(host, new RegExp(`^[^:]+:[^:]*:${victim.uid}:`, 'm'), "the host knows the victim's user (the check below means something)");
  const seen = await attack<{ users: number[]; groups: number[] }>('/accounts');
  assert.ok(seen.users.includes(0) && seen.users.includes(attacker.uid), `root and its own user are there: ${seen.users.join(', ')}`);
  assert.ok(!seen.users.includes(victim.uid), "the victim's user is not");
  assert.ok(
    seen.users.every((id) => id < 1000 || id === 65534 || id === attacker.uid),
    `only system accounts besides its own: ${seen.users.join(', ')}`,
  );
  assert.ok(
    seen.groups.every((id) => id < 1000 || id === 65534 || id === attacker.uid),
    `no other group of the machine: ${seen.groups.join(', ')}`,
  );
  assert.ok(!seen.groups.includes(victim.uid), "the victim's group is not");
  // Another tenant's user made and removed on the host meanwhile (what creating and deleting an
  // app does): useradd and userdel replace /etc/passwd and /etc/group by a rename, which must
  // not hand the running sandbox the host's whole files.
  const other = `slwother${process.pid}`;
  execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', other]);
  execFileSync('userdel', [other]);
  const after = await attack<{ users: number[]; groups: number[] }>('/accounts');
  assert.ok(after.users.includes(attacker.uid), `its own user is still there: ${after.users.join(', ')}`);
  assert.ok(!after.users.includes(victim.uid), "the victim's user is still not, after the host's files were replaced");
  assert.ok(!after.groups.includes(victim.uid), "the victim's group is still not, after the host's files were replaced");
});

test("/proc shows only the attacker's own sandbox: PID 1 is tini, no process of the victim, no secret", async () => {
  const seen =
    await attack<
      Array<{
        pid: number;
        uid: { ok: boolean; value?: number };
        cmdline: { ok: boolean; value?: string };
        environ: { ok: boolean; value?: string[] };
      }>
    >('/processes');
  const init = seen.find((p) => p.pid === 1);
  assert.ok(
    init?.cmdline.ok && init.cmdline.value!.startsWith('/usr/bin/tini'),
    `PID 1 is the sandbox's own init: ${JSON.stringify(init)}`,
  );
  assert.ok(
    seen.some((p) => p.environ.ok && p.environ.value!.includes(`APP_ID=${attacker.id}`)),
    'it reads its own environment (the probe works)',
  );
  for (const p of seen) {
    assert.equal(p.uid.value, attacker.uid, `every visible process is its own: ${JSON.stringify(p)}`);
    const env = p.environ.value ?? [];
    assert.ok(
      !env.includes(`APP_ID=${victim.id}`) && !env.some((v) => v.startsWith('VICTIM_SECRET=')),
      `no environment of the victim: ${JSON.stringify(p)}`,
    );
  }
  const victimOnHost = hostProcessesOf(victim.uid);
  assert.ok(victimOnHost.length >= 1, 'the victim runs on the host');
  assert.ok(
    seen.length <= 3,
    `tini and the app, not the host's processes of processes, not the host's: ${seen.map((p) => `${p.pid} ${p.cmdline.value}`).join('; ')}`,
  );
  await victimServes();
});

test("signals reach only the attacker's own processes: guessed pids of the victim, a scan, and kill(-1, SIGKILL)", async () => {
  const before = hostProcessesOf(victim.uid).map((p) => p.pid);
  assert.ok(before.length >= 1, 'the victim has processes to aim at');
  const seen = await attack<{
    canaryPid: number;
    guessed: Record<string, { probe: { ok: boolean; code?: string }; kill: { ok: boolean; code?: string } }>;
    reachable: number[];
    ownTasks: number[];
    killAll: { ok: boolean; code?: string };
    canaryEndedBy: string;
  }>(`/signals?pids=${q(before.map(String))}`, 60_000);
  assert.deepEqual(Object.keys(seen.guessed).sort(), before.map(String).sort(), 'every pid of the victim was aimed at');
  for (const [pid, outcome] of Object.entries(seen.guessed)) {
    assert.equal(outcome.probe.ok, false, `victim pid ${pid} cannot even be probed`);
    assert.equal(outcome.kill.ok, false, `victim pid ${pid} cannot be killed`);
  }
  assert.ok(seen.reachable.includes(seen.canaryPid), 'the scan finds its own child (the probe works)');
  for (const pid of seen.reachable) assert.ok(seen.ownTasks.includes(pid), `pid ${pid} is one of its own tasks`);
  assert.equal(seen.killAll.ok, true, `kill(-1) found something to kill: ${JSON.stringify(seen.killAll)}`);
  assert.equal(seen.canaryEndedBy, 'SIGKILL', 'kill(-1) killed its own child (the attack was real)');
  const after = hostProcessesOf(victim.uid).map((p) => p.pid);
  assert.deepEqual(after, before, 'every process of the victim is still there: none was killed nor restarted');
  await victimServes();
});

test("the store, the admin token and the victim's folders cannot be read", async () => {
  const own = join(attacker.cwd, 'server.js');
  const forbidden = [
    ...forbiddenFiles(),
    join(daemon.dataDir, 'apps', victim.id, 'releases'),
    victim.release,
    join(daemon.dataDir, 'logs'),
    join(daemon.dataDir, 'apps', victim.id, 'repo.git'),
    join(daemon.dataDir, 'apps', victim.id, 'cache'),
    join(daemon.dataDir, 'disks'),
  ];
  // The attacker's release is mounted at its own path, so the folders on the way to it exist in
  // its sandbox: listing them must show only that way, not the host's data folder.
  const onTheWay: Record<string, string[]> = {
    [daemon.dataDir]: ['apps'],
    [join(daemon.dataDir, 'apps')]: [attacker.id],
    [join(daemon.dataDir, 'apps', attacker.id)]: ['releases'],
  };
  // The paths exist on the host, so a refusal is the sandbox's doing, not a typo.
  for (const path of forbidden) assert.ok(existsSync(path), `${path} exists on the host`);
  const seen = await attack<Record<string, { ok: boolean; code?: string; entries?: string[] }>>(
    `/files?paths=${q([own, ...forbidden, ...Object.keys(onTheWay)])}`,
  );
  assert.equal(seen[own]!.ok, true, `it reads its own files (the probe works): ${JSON.stringify(seen[own])}`);
  for (const path of forbidden) assert.equal(seen[path]!.ok, false, `${path} must not be readable: ${JSON.stringify(seen[path])}`);
  for (const [path, allowed] of Object.entries(onTheWay)) {
    for (const entry of seen[path]!.entries ?? []) assert.ok(allowed.includes(entry), `${path} shows ${entry} in the attacker's sandbox`);
  }
  await victimServes();
});

test("the system is read-only, /tmp is private, and neither the victim's folder nor the data folder can be written", async () => {
  const tag = randomBytes(4).toString('hex');
  // The shared toolchains too: a file planted there would run in every app's build.
  const system = [`/usr/pwned-${tag}`, `/etc/pwned-${tag}`, `/pwned-${tag}`, join(dirname(attacker.execPath), `pwned-${tag}`)];
  const others = [
    join(victim.release, 'victim-data.txt'),
    join(victim.release, `pwned-${tag}`),
    join(daemon.dataDir, `pwned-${tag}`),
    join(daemon.dataDir, 'admin-token'),
  ];
  const allowed = [`/tmp/attacker-${tag}`, join(attacker.cwd, `own-${tag}`)];
  try {
    const seen = await attack<Record<string, { ok: boolean; code?: string }>>(`/writes?paths=${q([...system, ...others, ...allowed])}`);
    for (const path of allowed)
      assert.equal(seen[path]!.ok, true, `${path} is its own to write (the probe works): ${JSON.stringify(seen[path])}`);
    for (const path of system)
      assert.equal(seen[path]!.code, 'EROFS', `${path} is on a read-only file system: ${JSON.stringify(seen[path])}`);
    for (const path of others) assert.equal(seen[path]!.ok, false, `${path} must not be writable`);
    for (const path of [...system, join(victim.release, `pwned-${tag}`), join(daemon.dataDir, `pwned-${tag}`)]) {
      assert.equal(existsSync(path), false, `${path} did not appear on the host`);
    }
    assert.equal(existsSync(`/tmp/attacker-${tag}`), false, "the sandbox's /tmp is its own, not the host's");
  } finally {
    for (const path of [...system, `/tmp/attacker-${tag}`]) rmSync(path, { force: true });
  }
  await victimServes();
});

/** The names in the attacker's folder of writable layers (one per running sandbox of its releases). */
function attackerLayers(): string[] {
  const folder = join(daemon.dataDir, 'apps', attacker.id, 'sandboxes');
  return existsSync(folder) ? readdirSync(folder) : [];
}

test('the release is read-only for the app: its writes go to a layer of its own sandbox, gone at a restart, never into the release on the host', async () => {
  const tag = randomBytes(4).toString('hex');
  const implant = join(attacker.cwd, `implant-${tag}`);
  // A file of the release the app does not need to start (its build ran it).
  const releaseFile = join(attacker.cwd, 'build-probe.js');
  const onHost = (path: string) => join(attacker.release, path.slice(attacker.cwd.length + 1));
  const original = readFileSync(onHost(releaseFile));
  const entries = readdirSync(attacker.release).sort();
  const written = Buffer.byteLength('pwned by the attacker\n');
  assert.notEqual(original.length, written);

  const wrote = await attack<Record<string, { ok: boolean; code?: string }>>(`/writes?paths=${q([implant, releaseFile])}`);
  assert.equal(wrote[implant]!.ok, true, `it writes a new file into its folder: ${JSON.stringify(wrote[implant])}`);
  assert.equal(wrote[releaseFile]!.ok, true, `it overwrites a file of its release in its folder: ${JSON.stringify(wrote[releaseFile])}`);
  const read = await attack<Record<string, { ok: boolean; bytes?: number }>>(`/files?paths=${q([implant, releaseFile])}`);
  assert.equal(read[implant]!.bytes, written, 'it reads back what it wrote');
  assert.equal(read[releaseFile]!.bytes, written, 'it reads back the file it changed');
  assert.deepEqual(readdirSync(attacker.release).sort(), entries, 'no file appeared in the release folder on the host');
  assert.deepEqual(readFileSync(onHost(releaseFile)), original, 'the file of the release on the host is unchanged');
  const layers = attackerLayers();
  const holder = layers.find((id) => existsSync(join(daemon.dataDir, 'apps', attacker.id, 'sandboxes', id, 'upper', `implant-${tag}`)));
  assert.ok(holder, `the write is in a layer of the instance's sandbox, in the app's own filesystem: ${layers.join(' ')}`);

  // A one-off command runs in a sandbox of its own: it sees the release, not the instance's writes.
  const run = await daemon.cli([
    'run',
    '--app',
    attacker.id,
    '--',
    'sh',
    '-c',
    `test -e implant-${tag} && echo implant-seen; wc -c < build-probe.js; echo mine > run-${tag} && cat run-${tag}`,
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(run.stdout.trim().split(/\s+/), [String(original.length), 'mine'], run.stdout);
  assert.deepEqual(readdirSync(attacker.release).sort(), entries, "the one-off command's write did not reach the host either");

  const restarted = await daemon.cli(['restart', '--app', attacker.id]);
  assert.equal(restarted.code, 0, restarted.stderr);
  await waitUntil(
    'the attacker to serve from a new instance',
    async () => ((await appServes(attacker.id)) && !attackerLayers().includes(holder) ? true : undefined),
    60_000,
  );
  const after = await attack<Record<string, { ok: boolean; code?: string; bytes?: number }>>(`/files?paths=${q([implant, releaseFile])}`);
  assert.equal(after[implant]!.code, 'ENOENT', `the file it wrote is gone after the restart: ${JSON.stringify(after[implant])}`);
  assert.equal(after[releaseFile]!.bytes, original.length, 'the file of the release is as the build left it again');
  assert.deepEqual(readdirSync(attacker.release).sort(), entries);
  assert.deepEqual(readFileSync(onHost(releaseFile)), original);
  await victimServes();
});

test("an instance reaches neither the daemon's ports nor the victim directly, only the router", async () => {
  const router = `${gateway}:${daemon.routerPort}`;
  const forbidden = forbiddenTargets();
  const seen = await attack<Record<string, string>>(`/network?targets=${q([router, ...forbidden])}`, 60_000);
  console.log(`# from an instance: ${JSON.stringify(seen)}`);
  assert.equal(seen[router], 'connected', 'the router is reachable from an instance (the probe works)');
  for (const target of forbidden) assert.notEqual(seen[target], 'connected', `${target} must be out of reach of an instance`);
  await victimServes();
});

test("a build reaches neither the daemon's ports, the router nor the victim, and reads neither the store nor the victim's files", async () => {
  const log = await deploymentLog(daemon, attacker.id, attacker.firstDeployment);
  const probes = new Map(
    log
      .map((l) => /^build-probe (\S+) (\S+)$/.exec(l.trim()))
      .filter((m) => m !== null)
      .map((m) => [m[1]!, m[2]!]),
  );
  console.log(`# from a build: ${JSON.stringify(Object.fromEntries(probes))}`);
  assert.equal(probes.get('uid'), String(attacker.uid), `the preinstall script ran as the app's user:\n${log.join('\n')}`);
  assert.equal(probes.get('self'), 'connected', 'the build connects to a listener of its own (the probe works)');
  for (const target of buildTargets) {
    assert.ok(probes.has(target), `the build tried ${target}:\n${log.join('\n')}`);
    assert.notEqual(probes.get(target), 'connected', `${target} must be out of reach of a build`);
  }
  assert.ok(Number(probes.get('processes')) >= 1, 'the build sees its own processes');
  assert.equal(probes.get('foreign-processes'), '0', "the build sees no process that is not the app's");
  for (const path of buildPaths) assert.notEqual(probes.get(path), 'read', `the build must not read ${path}`);
  assert.ok(!log.join('\n').includes(SECRET));
  await victimServes();
});

test('a storm of 5000 processes is stopped by the process limit; the victim serves and the daemon deploys meanwhile', async () => {
  const storm = await attack<{ started: number; refused: number; firstError: string | null }>('/storm?count=5000&holdMs=180000', 120_000);
  console.log(`# the storm: ${JSON.stringify(storm)}`);
  try {
    assert.ok(storm.started >= 50, `the storm did start processes (the probe works): ${JSON.stringify(storm)}`);
    assert.ok(storm.started < NANO_TASKS, `held under the default flavour's ${NANO_TASKS} tasks: ${JSON.stringify(storm)}`);
    assert.ok(storm.refused > 4000, `most of the 5000 were refused: ${JSON.stringify(storm)}`);
    const onHost = hostProcessesOf(attacker.uid).length;
    assert.ok(onHost >= storm.started && onHost <= NANO_TASKS, `the host counts ${onHost} processes of the attacker`);
    await victimServes();
    // A push of the victim while the storm holds its processes: export, build and a new
    // instance all need the daemon to start processes.
    newRelease(victim.dir, 'during-the-storm');
    const d = await pushAndWait(daemon, victim.dir, victim.id, gitEnv);
    assert.equal(d.state, 'OK', (await deploymentLog(daemon, victim.id, d.id)).join('\n'));
    victim.release = join(daemon.dataDir, 'apps', victim.id, 'releases', d.id);
    const facts = JSON.parse((await victimAnswer()).body) as { release: string };
    assert.equal(facts.release, 'during-the-storm', 'the new release serves');
    await victimServes();
    // The old instance drains; later tests count the victim's processes (tini and node).
    await waitUntil(
      'the old instance of the victim to end',
      async () => (hostProcessesOf(victim.uid).length <= 2 ? true : undefined),
      60_000,
    );
  } finally {
    const stopped = await attack<{ stopped: number }>('/storm-stop');
    assert.equal(stopped.stopped, storm.started, 'the storm was still holding its processes');
  }
});

test('a rollback starts the earlier release afresh: what the app wrote into its folder there is gone', async () => {
  const rolled = await daemon.cli(['rollback', '--app', victim.id]);
  assert.equal(rolled.code, 0, rolled.stderr);
  victim.release = victim.firstRelease;
  const facts = JSON.parse((await victimAnswer()).body) as { release: string };
  assert.equal(facts.release, 'none', 'the first release serves again');
  // Its first instance wrote into this very folder at its start: the new one finds nothing.
  await victimServes();
  // The replaced instance drains; later tests count the victim's processes (tini and node).
  await waitUntil(
    'the replaced instance of the victim to end',
    async () => (hostProcessesOf(victim.uid).length <= 2 ? true : undefined),
    60_000,
  );
});

test('a memory hog is killed inside its own group, its log names the limit, and it restarts', async () => {
  const help = await daemon.cli(['scale', '--help']);
  let flavor = 'nano';
  let limit = '512 MiB';
  if (/--flavor/.test(help.stdout + help.stderr)) {
    const scaled = await daemon.cli(['scale', '--flavor', 'pico', '--app', attacker.id]);
    assert.equal(scaled.code, 0, scaled.stderr);
    const restarted = await daemon.cli(['restart', '--app', attacker.id]);
    assert.equal(restarted.code, 0, restarted.stderr);
    [flavor, limit] = ['pico', '256 MiB'];
  } else {
    console.log('# slipway scale has no --flavor yet: the hog runs under the default flavour (nano, 512 MiB)');
  }
  await waitUntil('the attacker to serve after its restart', () => appServes(attacker.id), 60_000);
  const victimBefore = hostProcessesOf(victim.uid).map((p) => p.pid);
  await getThroughRouter(daemon, `${attacker.id}.localhost`, '/hog', {}, 30_000).catch(() => undefined);
  const lines = await waitUntil(
    'the out-of-memory kill and the restart in the app log',
    async () => {
      const l = (await daemon.cli(['logs', '--app', attacker.id, '--lines', '200'])).stdout.split('\n');
      return l.some((x) => x.includes(`out of memory: limit ${limit} (flavour ${flavor})`)) && l.some((x) => /restarting in/.test(x))
        ? l
        : undefined;
    },
    90_000,
  );
  assert.ok(
    lines.some((l) => l.includes(`out of memory: limit ${limit} (flavour ${flavor})`)),
    lines.join('\n'),
  );
  await waitUntil('the attacker to serve again after the restart', () => appServes(attacker.id), 90_000);
  assert.deepEqual(
    hostProcessesOf(victim.uid).map((p) => p.pid),
    victimBefore,
    'the kill stayed inside the hog: the victim was not touched',
  );
  await victimServes();
});

test('kill -9 of the daemon mid-build: after a restart no build process nor folder is left, the deployment is CANCELLED, every app serves', async () => {
  assert.equal((await daemon.cli(['env', 'set', 'BUILD_SLEEP_SECONDS', '900', '--app', attacker.id])).code, 0);
  newRelease(attacker.dir, 'slow-build');
  const commit = commitAll(attacker.dir, 'a build that sleeps');
  const pushed = await gitPush(attacker.dir, `git+ssh://git@127.0.0.1:${daemon.sshPort}/${attacker.id}.git`, gitEnv);
  assert.equal(pushed.code, 0, pushed.output);
  const isBuildProcess = (p: { args: string }) => /build-probe\.js|npm/.test(p.args);
  // What its instance runs: tini and node ./server.js. Anything else of its uid is the build's.
  const isInstanceProcess = (p: { args: string }) => /^(\/usr\/bin\/tini -g -- )?node \.\/server\.js$/.test(p.args);
  const buildProcesses = await waitUntil(
    'the build to sleep in its preinstall script',
    async () => {
      const found = hostProcessesOf(attacker.uid).filter(isBuildProcess);
      return found.some((p) => p.args.includes('build-probe.js')) ? found : undefined;
    },
    120_000,
  );
  const deployment = JSON.parse((await daemon.cli(['activity', '--app', attacker.id, '--format', 'json', '--limit', '5'])).stdout).find(
    (d: { commit: string }) => d.commit === commit,
  ) as { id: string };
  assert.ok(deployment, 'the deployment is listed');
  const buildSandbox = `d-${deployment.id.replace(/^deployment_/, '')}`;
  const runcList = () =>
    execFileSync('runc', ['--root', join(daemon.dataDir, 'runc'), 'list', '-q'], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean);
  assert.ok(
    runcList().some((id) => id.startsWith(buildSandbox)),
    `runc knows the build's sandbox ${buildSandbox}: ${runcList().join(' ')}`,
  );

  // The monitor holding the build's sandbox on the host (conmon), which a daemon killed with -9 leaves running.
  const buildMonitors = () =>
    readdirSync('/proc')
      .filter((e) => /^\d+$/.test(e))
      .filter((e) => {
        try {
          const argv = readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0');
          return argv[0] === '/usr/bin/conmon' && argv[argv.indexOf('--cid') + 1]!.startsWith(buildSandbox);
        } catch {
          return false;
        }
      });
  assert.equal(buildMonitors().length, 1, "one conmon holds the build's sandbox");

  // What the running instance wrote into its folder stays while it runs: a new daemon adopts it with its layer.
  const kept = join(attacker.cwd, `adopted-${randomBytes(4).toString('hex')}`);
  assert.equal((await attack<Record<string, { ok: boolean }>>(`/writes?paths=${q([kept])}`))[kept]!.ok, true);

  const pid = daemon.pid();
  process.kill(pid, 'SIGKILL');
  await waitUntil('the daemon to die', async () => (existsSync(`/proc/${pid}`) ? undefined : true), 10_000);
  const survivors = hostProcessesOf(attacker.uid).filter(isBuildProcess);
  console.log(`# after kill -9 and before the restart, ${survivors.length} of the build's ${buildProcesses.length} processes still run`);

  await daemon.restart();
  const left = hostProcessesOf(attacker.uid).filter((p) => !isInstanceProcess(p));
  assert.deepEqual(left, [], 'no process of the build survives the restart');
  assert.deepEqual(
    runcList().filter((id) => id.startsWith(buildSandbox)),
    [],
    'runc knows no sandbox of the build any more',
  );
  assert.deepEqual(buildMonitors(), [], "no monitor of the build's sandbox is left");
  assert.deepEqual(
    readdirSync(join(daemon.dataDir, 'apps', attacker.id)).filter((name) => name.startsWith('build')),
    [],
    'the build folder (and the build credentials) are wiped',
  );
  const d = await waitForDeploymentOf(daemon, attacker.id, commit, 30_000);
  assert.equal(d.state, 'CANCELLED', JSON.stringify(d));
  await waitUntil('the victim to serve again', () => appServes(victim.id), 90_000);
  await victimServes();
  await waitUntil('the attacker to serve its last good release again', () => appServes(attacker.id), 90_000);
  assert.equal((await attack<{ uid: number }>('/whoami')).uid, attacker.uid);
  assert.equal(
    (await attack<Record<string, { ok: boolean }>>(`/files?paths=${q([kept])}`))[kept]!.ok,
    true,
    "the adopted instance's layer was kept by the new daemon",
  );
});
