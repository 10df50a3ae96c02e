/**
 * FS buckets on a two-node Docker Swarm (issue 34, item 4), driven as a user would: the CLI, git
 * push, requests through the router. The second node is a dockerd in a namespace of the test's
 * own (test/support/swarm-second-node.ts); the buckets reach it from the GlusterFS server at this
 * machine's address on its link (--swarm-bucket-server), mounted by its FUSE client on the node. Skipped, saying
 * why, only where Docker cannot run.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { waitUntil } from '../support/wait.js';
import {
  checkoutFixture,
  createApp,
  deploymentLog,
  newRelease,
  pushAndWait,
  registerSshKey,
  requestThroughRouter,
} from '../support/deploy.js';
import { cliJson, restoreTested } from '../support/addon-cli.js';
import { steadyLoad } from '../support/steady-load.js';
import { freeSwarmSubnet, swarmBackendMissing } from '../support/swarm-backend.js';
import { DockerApi } from '../../src/instances/swarm/docker-api.js';
import { bucketVolumeName } from '../../src/instances/swarm/bucket-server-config.js';
import { type SecondNode, startSecondSwarmNode, updateNode } from '../support/swarm-second-node.js';
import type { AddonView } from '../../src/shared/api-types.js';

const missing = await swarmBackendMissing();
if (missing) console.log(`# skipping the swarm buckets test: ${missing}`);

const docker = new DockerApi();

const execFileAsync = promisify(execFile);

describe('FS buckets on a two-node Docker Swarm', { skip: missing ? `swarm: ${missing}` : false }, () => {
  let node: SecondNode;
  let manager: string;
  let daemon: TestDaemon;
  let gitEnv: NodeJS.ProcessEnv;
  let dir: string;
  let appId: string;
  let files: AddonView;

  function call(app: string, method: 'GET' | 'POST', path: string, body = ''): Promise<{ status: number; body: string }> {
    return requestThroughRouter(daemon, `${app}.localhost`, { method, path, body, timeoutMs: 60_000 });
  }

  async function cliOk(args: string[]): Promise<string> {
    const result = await daemon.cli(args);
    assert.equal(result.code, 0, `slipway ${args.join(' ')} failed:\n${result.stderr}`);
    return `${result.stdout}${result.stderr}`;
  }

  async function deploy(where: string, app: string, release: string): Promise<void> {
    newRelease(where, release);
    const result = await pushAndWait(daemon, where, app, gitEnv);
    assert.equal(result.state, 'OK', (await deploymentLog(daemon, app, result.id)).join('\n'));
  }

  /** The app's running task containers, with the node each runs on. */
  async function tasksOf(app: string): Promise<Array<{ node: string; container: string }>> {
    const services = await docker.json<Array<{ ID: string; Spec: { Labels: Record<string, string> } }>>({
      path: '/services',
      query: { filters: JSON.stringify({ label: [`slipway.app=${app}`, 'slipway.role=instance'] }) },
      what: 'list services',
    });
    const found: Array<{ node: string; container: string }> = [];
    for (const s of services) {
      const tasks = await docker.json<Array<{ NodeID: string; Status: { State: string; ContainerStatus?: { ContainerID?: string } } }>>({
        path: '/tasks',
        query: { filters: JSON.stringify({ service: [s.ID], 'desired-state': ['running'] }) },
        what: 'list tasks',
      });
      for (const t of tasks.filter((t) => t.Status.State === 'running'))
        found.push({ node: t.NodeID, container: t.Status.ContainerStatus!.ContainerID! });
    }
    return found;
  }

  /** A shell command in a task, as its user, through the Docker API of the node it runs on. */
  function inTask(task: { node: string; container: string }, script: string): string {
    const host = task.node === node.nodeId ? ['-H', `unix://${node.socket}`] : [];
    return execFileSync('docker', [...host, 'exec', task.container, '/bin/sh', '-c', script], { encoding: 'utf8', stdio: 'pipe' }).trim();
  }

  before(async () => {
    const started = await startSecondSwarmNode(docker).catch((e: Error) => e.message);
    assert.ok(typeof started !== 'string', `no second swarm node: ${started}`);
    node = started;
    manager = (await docker.json<{ Swarm: { NodeID: string } }>({ path: '/info', what: 'describe the manager' })).Swarm.NodeID;
    const tasksPrefix = (await freeSwarmSubnet()).replace(/\.0\.0\/16$/, '');
    // The nodes reach the buckets' server at this machine's address on their link.
    daemon = await startDaemon([
      '--backend',
      'swarm',
      '--swarm-subnet',
      `${tasksPrefix}.0.0/16`,
      '--swarm-bucket-server',
      node.hostAddress,
    ]);
    await node.addSubnetPart(`slipway${daemon.subnet.split('.')[1]}`, `${tasksPrefix}.200.0/24`, `${tasksPrefix}.200.1`);
    await updateNode(docker, node.nodeId, (spec) => (spec.Availability = 'active'));
    ({ gitEnv } = await registerSshKey(daemon));
    dir = checkoutFixture('bucket-app');
    appId = await createApp(daemon, dir, 'swarm-files', { ORDERS_FILE: 'uploads/orders.log' });
    files = await cliJson<AddonView>(daemon, ['addon', 'create', 'fs-bucket', 'swarm-files-bucket', '--plan', '32M']);
    await cliOk(['service', 'link-addon', 'swarm-files-bucket', '--app', appId, '--mount', '/uploads']);
    await cliOk(['scale', '--instances', '2', '--app', appId]);
    await deploy(dir, appId, 'one');
  });

  after(async () => {
    if (manager) await updateNode(docker, manager, (spec) => (spec.Availability = 'active')).catch(() => undefined);
    await daemon?.stop();
    await node?.stop();
  });

  test('tasks on both nodes share the bucket: what one writes the other reads, and it lands in the bucket on this machine', async () => {
    const tasks = await tasksOf(appId);
    assert.deepEqual(new Set(tasks.map((t) => t.node)), new Set([manager, node.nodeId]), 'one task on each node');
    const [a, b] = tasks as [(typeof tasks)[0], (typeof tasks)[0]];
    for (const task of tasks) {
      const mount = inTask(task, 'grep " $PWD/uploads " /proc/mounts');
      assert.match(mount, / fuse\.glusterfs .*nosuid,nodev/, `the bucket is the network mount, nodev and nosuid: ${mount}`);
    }
    inTask(a, 'echo from-a > uploads/a.txt');
    inTask(b, 'echo from-b > uploads/b.txt');
    assert.equal(inTask(b, 'cat uploads/a.txt'), 'from-a');
    assert.equal(inTask(a, 'cat uploads/b.txt'), 'from-b');
    // Through HTTP, whichever task answers.
    for (let i = 0; i < 6; i++) assert.equal((await call(appId, 'POST', `/write?path=uploads/http-${i}.txt`, `file ${i}`)).status, 200);
    for (let round = 0; round < 2; round++)
      for (let i = 0; i < 6; i++) assert.equal((await call(appId, 'GET', `/read?path=uploads/http-${i}.txt`)).body, `file ${i}`);
    const onHost = join(daemon.dataDir, 'fs-buckets', files.id);
    assert.equal(readFileSync(join(onHost, 'a.txt'), 'utf8'), 'from-a\n');
    assert.equal(readFileSync(join(onHost, 'http-3.txt'), 'utf8'), 'file 3');
    // Each file is its writer's, the app's own user, in the bucket's group, as on one machine.
    const uid = Number(inTask(b, 'id -u'));
    assert.notEqual(uid, 0);
    for (const name of ['a.txt', 'b.txt', 'http-3.txt']) {
      const stat = statSync(join(onHost, name));
      assert.equal(stat.uid, uid, `${name} belongs to the app's user`);
      assert.equal(stat.gid, statSync(onHost).gid, `${name} is in the bucket's group`);
      assert.equal(stat.mode & 0o060, 0o060, `${name} is read-write for the bucket's group whatever the umask`);
    }
  });

  test('a second app, of another user, shares the bucket: it changes the first one’s files and its own are its own', {
    timeout: 300_000,
  }, async () => {
    const otherDir = checkoutFixture('bucket-app');
    const other = await createApp(daemon, otherDir, 'swarm-files-reader');
    await cliOk(['service', 'link-addon', 'swarm-files-bucket', '--app', other, '--mount', '/shared']);
    await deploy(otherDir, other, 'reader-one');
    assert.equal((await call(other, 'GET', '/read?path=shared/a.txt')).body, 'from-a\n');
    assert.equal((await call(appId, 'POST', '/write?path=uploads/both.txt', 'the writer\n')).status, 200);
    const appended = await call(other, 'POST', '/append?path=shared/both.txt', 'and the reader\n');
    assert.equal(appended.status, 200, appended.body);
    assert.equal((await call(appId, 'GET', '/read?path=uploads/both.txt')).body, 'the writer\nand the reader\n');
    assert.equal((await call(other, 'POST', '/write?path=shared/reader.txt', 'mine')).status, 200);
    const onHost = join(daemon.dataDir, 'fs-buckets', files.id);
    const [readerTask] = await tasksOf(other);
    const [writerTask] = await tasksOf(appId);
    const readerUid = Number(inTask(readerTask!, 'id -u'));
    assert.notEqual(readerUid, Number(inTask(writerTask!, 'id -u')), 'two users');
    assert.equal(statSync(join(onHost, 'reader.txt')).uid, readerUid);
    // Each app goes through a client of its own on every node.
    const holders = execFileSync('docker', ['ps', '--filter', 'label=slipway.role=bucket-holder', '--format', '{{.Names}}'], {
      encoding: 'utf8',
    });
    assert.match(holders, new RegExp(`-u${readerUid}\\b`));
    await cliOk(['delete', '--app', other, '--yes']);
  });

  test('a lock taken in a task of one node holds against a task of the other', async () => {
    const [a, b] = (await tasksOf(appId)) as Array<{ node: string; container: string }>;
    assert.ok(a && b && a.node !== b.node, 'one task on each node');
    const host = a.node === node.nodeId ? ['-H', `unix://${node.socket}`] : [];
    // Task a holds an exclusive flock for 6 s; task b, on the other node, tries it meanwhile and after.
    const holding = execFileAsync('docker', [...host, 'exec', a.container, 'flock', '-x', 'uploads/.lock', 'sleep', '6']);
    try {
      await waitUntil(
        'the lock file made by the other task',
        () => inTask(b, 'test -e uploads/.lock && echo yes || true') === 'yes',
        10_000,
      );
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.equal(inTask(b, 'flock -n -x uploads/.lock true; echo $?'), '1', 'the lock is held for the other node');
    } finally {
      await holding;
    }
    assert.equal(inTask(b, 'flock -n -x uploads/.lock true; echo $?'), '0', 'and free once let go');
  });

  test('a redeploy under keep-alive and POST load fails no request; the files stay', { timeout: 300_000 }, async () => {
    const load = steadyLoad(daemon, `${appId}.localhost`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await deploy(dir, appId, 'two');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const { failures, failureCount, releases, counts } = await load.stop();
    assert.deepEqual(failures, [], `failed requests: ${failureCount}`);
    assert.ok(releases.has('one') && releases.has('two'), `both releases served (${[...releases].join(', ')})`);
    assert.equal((await call(appId, 'GET', '/read?path=uploads/a.txt')).body, 'from-a\n');
    const orders = (await call(appId, 'GET', '/read?path=uploads/orders.log')).body.split('\n').filter(Boolean);
    assert.equal(orders.length, counts.post, 'one order per answered POST, from the tasks of both nodes');
  });

  test('a link planted in the bucket leads nowhere outside it', async () => {
    const secret = join(daemon.dataDir, 'outside-the-bucket.txt');
    writeFileSync(secret, 'secret of the control machine');
    assert.equal((await call(appId, 'POST', '/write?path=uploads/hostile/.made', '')).status, 200);
    const planted = await call(appId, 'POST', '/hostile?path=uploads/hostile');
    assert.equal(planted.status, 200, planted.body);
    // The links are read by the tasks, in their own view: not the control machine's files.
    for (const path of [
      'uploads/hostile/data-link/outside-the-bucket.txt',
      'uploads/hostile/shadow-link',
      'uploads/hostile/etc-link/hostname',
    ]) {
      for (let i = 0; i < 2; i++) {
        const read = await call(appId, 'GET', `/read?path=${path}`);
        assert.doesNotMatch(read.body, /secret of the control machine|root:/, `${path}: ${read.body.slice(0, 200)}`);
      }
    }
    // The set-uid copy is inert: the mount is nosuid (checked above), and it stays the task's user's.
    const stat = JSON.parse((await call(appId, 'GET', '/stat?path=uploads/hostile/suid-id')).body) as { uid: number };
    assert.notEqual(stat.uid, 0);
  });

  test('a bucket server killed (its brick, then glusterd) is started again, and the tasks of both nodes read and write on', {
    timeout: 180_000,
  }, async () => {
    const volume = bucketVolumeName(join(daemon.dataDir, 'fs-buckets', files.id));
    const pidOf = (pattern: string) => execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).trim().split('\n').map(Number);
    const [brick] = pidOf(`glusterfsd .*--volfile-id ${volume}\\.`);
    process.kill(brick!, 'SIGKILL');
    const [glusterd] = pidOf(`glusterd -N -f ${daemon.dataDir}/`);
    process.kill(glusterd!, 'SIGKILL');
    // A task whose health check failed meanwhile may have been replaced: the tasks are read again each time.
    await waitUntil(
      'a write through the restarted brick from the tasks of both nodes',
      async () => {
        const tasks = await tasksOf(appId);
        if (new Set(tasks.map((t) => t.node)).size < 2) return false;
        return tasks.every((task, n) => {
          try {
            return (
              inTask(task, `echo after-the-kill > uploads/after-kill-${n}.txt && cat uploads/after-kill-${n}.txt`) === 'after-the-kill'
            );
          } catch {
            return false;
          }
        });
      },
      90_000,
    );
    assert.notDeepEqual(pidOf(`glusterfsd .*--volfile-id ${volume}\\.`), [brick], 'a new brick serves');
    assert.notDeepEqual(pidOf(`glusterd -N -f ${daemon.dataDir}/`), [glusterd], 'a new glusterd runs');
    assert.equal(inTask((await tasksOf(appId))[0]!, 'cat uploads/a.txt'), 'from-a');
  });

  test("a write past the bucket's size fails in the task; the bucket keeps what it had", { timeout: 180_000 }, async () => {
    const reply = await call(appId, 'POST', '/fill?path=uploads');
    assert.equal(reply.status, 200, reply.body);
    const filled = JSON.parse(reply.body) as { written: number; code: string };
    assert.ok(filled.written > 0 && filled.written <= 32 * 1024 * 1024, `wrote ${filled.written} bytes`);
    assert.equal(filled.code, 'ENOSPC', 'the write fails as on a full disk');
    assert.equal((await call(appId, 'GET', '/read?path=uploads/b.txt')).body, 'from-b\n');
    // The app frees what it filled, as a user would: the next tests write to the bucket.
    inTask((await tasksOf(appId))[0]!, 'rm -f uploads/fill-*');
    const written = await call(appId, 'POST', '/write?path=uploads/after-freeing.txt', 'room again');
    assert.equal(written.status, 200, written.body);
  });

  test('a restore in place reaches the tasks of both nodes once the app restarted on it', { timeout: 600_000 }, async () => {
    const before = await call(appId, 'POST', '/write?path=uploads/backed-up.txt', 'in the backup');
    assert.equal(before.status, 200, before.body);
    const { id } = await cliJson<{ id: string }>(daemon, ['addon', 'backup', 'swarm-files-bucket']);
    await restoreTested(daemon, 'swarm-files-bucket', id, 180_000);
    assert.equal((await call(appId, 'POST', '/write?path=uploads/after-backup.txt', 'not in it')).status, 200);
    const restored = await daemon.cli(['addon', 'restore', 'swarm-files-bucket', '--backup', id, '--yes'], { timeoutMs: 600_000 });
    assert.equal(restored.code, 0, restored.stderr);
    // The restart's new tasks serve; the old ones may still be draining a moment.
    const tasks = await waitUntil('the old tasks gone after the restart', async () => {
      const now = await tasksOf(appId);
      return now.length === 2 ? now : undefined;
    });
    assert.deepEqual(new Set(tasks.map((t) => t.node)), new Set([manager, node.nodeId]), 'one task on each node');
    for (const task of tasks) {
      assert.equal(inTask(task, 'cat uploads/backed-up.txt'), 'in the backup');
      assert.equal(inTask(task, 'test -e uploads/after-backup.txt && echo there || echo gone'), 'gone');
      inTask(task, 'echo written-after-restore >> uploads/after-restore.txt');
    }
    const onHost = join(daemon.dataDir, 'fs-buckets', files.id);
    assert.equal(readFileSync(join(onHost, 'after-restore.txt'), 'utf8'), 'written-after-restore\n'.repeat(2));
  });

  test('an exclusive volume follows its instance to the other node on a deploy, with its data', { timeout: 300_000 }, async () => {
    const ledgerDir = checkoutFixture('bucket-app');
    const ledger = await createApp(daemon, ledgerDir, 'swarm-ledger');
    await cliJson<AddonView>(daemon, ['addon', 'create', 'fs-bucket', 'swarm-ledger-db', '--exclusive', '--plan', '16M']);
    await cliOk(['service', 'link-addon', 'swarm-ledger-db', '--app', ledger, '--mount', '/data']);
    await deploy(ledgerDir, ledger, 'l1');
    const written = await call(ledger, 'POST', '/write?path=data/ledger.txt', 'entry 1');
    assert.equal(written.status, 200, written.body);
    const [before] = await tasksOf(ledger);
    assert.ok(before);
    // New tasks go to the other node: the next deploy's instance lands there.
    await updateNode(docker, before.node, (spec) => (spec.Availability = 'pause'));
    const load = steadyLoad(daemon, `${ledger}.localhost`);
    try {
      await deploy(ledgerDir, ledger, 'l2');
    } finally {
      const { failures } = await load.stop();
      await updateNode(docker, before.node, (spec) => (spec.Availability = 'active'));
      assert.deepEqual(failures, [], 'the handover fails no request');
    }
    const after = await tasksOf(ledger);
    assert.equal(after.length, 1);
    assert.notEqual(after[0]!.node, before.node, 'the instance moved to the other node');
    assert.equal((await call(ledger, 'GET', '/read?path=data/ledger.txt')).body, 'entry 1');
  });
});
