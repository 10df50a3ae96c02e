/**
 * An app on a Docker Swarm, driven as a user would: git push, the CLI, requests through the
 * router. Skipped, saying why, only where Docker cannot run (scripts/swarm-setup.sh, run by
 * ./dev setup as root, makes this machine a swarm manager with a registry). Its manager is this
 * machine; a second node (test/support/swarm-second-node.ts) joins drained, and takes tasks in
 * its own test only; where it cannot be made, that test is skipped saying why.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import {
  checkoutExample,
  createApp,
  deploymentLog,
  getThroughRouter,
  gitPush,
  newRelease,
  pushAndWait,
  registerSshKey,
} from '../support/deploy.js';
import { steadyLoad } from '../support/steady-load.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { freeSwarmSubnet, registryGet, swarmBackendMissing } from '../support/swarm-backend.js';
import { DockerApi } from '../../src/instances/swarm/docker-api.js';
import { NODE_ADDRESS, type SecondNode, startSecondSwarmNode, updateNode } from '../support/swarm-second-node.js';

const missing = await swarmBackendMissing();
if (missing) console.log(`# skipping the swarm integration test: ${missing}`);

const docker = new DockerApi();
/** Prints whether a TCP connection to argv host:port opens within 2 s. */
const PROBE = `const s = require('node:net').connect(Number(process.argv[2]), process.argv[1]);
s.setTimeout(2000, () => { console.log('refused'); process.exit(0); });
s.on('connect', () => { console.log('connected'); process.exit(0); });
s.on('error', () => { console.log('refused'); process.exit(0); });`;

describe('an app on a single-node Docker Swarm', { skip: missing ? `swarm: ${missing}` : false }, () => {
  /** The first two octets of the tasks' /16, drawn free (test/support/swarm-backend.ts). */
  let tasksPrefix: string;
  let daemon: TestDaemon;
  let gitEnv: NodeJS.ProcessEnv;
  let dir: string;
  let appId: string;
  let host: string;
  const deployments: Record<string, string> = {};
  /** Another node of the swarm (a namespace of this machine with its own dockerd), or why there is none. */
  let secondNode: Promise<SecondNode | string>;

  /** The app's swarm services with a running task, and how many tasks run in each. */
  async function runningTasks(): Promise<number[]> {
    const services = await docker.json<Array<{ ID: string }>>({
      path: '/services',
      query: { filters: JSON.stringify({ label: [`slipway.app=${appId}`] }) },
      what: 'list services',
    });
    const running: number[] = [];
    for (const s of services) {
      const tasks = await docker.json<Array<{ Status: { State: string } }>>({
        path: '/tasks',
        query: { filters: JSON.stringify({ service: [s.ID] }) },
        what: 'list tasks',
      });
      const count = tasks.filter((t) => t.Status.State === 'running').length;
      if (count > 0) running.push(count);
    }
    return running;
  }

  /** Requests through the router on keep-alive connections while `during` runs: how many, which failed, who answered. */
  async function underLoad<T>(during: () => Promise<T>): Promise<{ result: T; ok: number; failures: string[]; instances: Set<string> }> {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
    let ok = 0;
    const failures: string[] = [];
    const instances = new Set<string>();
    let running = true;
    const worker = async () => {
      while (running) {
        await new Promise<void>((resolve) => {
          const req = http.get(
            { host: '127.0.0.1', port: daemon.routerPort, path: '/', headers: { host }, agent, timeout: 10_000 },
            (res) => {
              let body = '';
              res.on('data', (c) => (body += c));
              res.on('end', () => {
                if (res.statusCode === 200) {
                  ok++;
                  instances.add((JSON.parse(body) as { instanceId: string }).instanceId);
                } else failures.push(`HTTP ${res.statusCode}`);
                resolve();
              });
            },
          );
          req.on('timeout', () => req.destroy(new Error('timed out')));
          req.on('error', (e) => {
            failures.push(e.message);
            resolve();
          });
        });
      }
    };
    const load = Promise.all([worker(), worker(), worker(), worker()]);
    try {
      return { result: await during(), ok, failures, instances };
    } finally {
      running = false;
      await load;
      agent.destroy();
    }
  }

  async function served(): Promise<{ release: string; instanceId: string }> {
    const response = await getThroughRouter(daemon, host);
    assert.equal(response.status, 200, response.body);
    return JSON.parse(response.body) as { release: string; instanceId: string };
  }

  async function deploy(name: string): Promise<{ id: string; state: string }> {
    newRelease(dir, name);
    const result = await pushAndWait(daemon, dir, appId, gitEnv);
    deployments[name] = result.id;
    return result;
  }

  before(async () => {
    // Joins (drained: no task goes there until its test) while the daemon starts.
    secondNode = startSecondSwarmNode(docker).catch((e: Error) => e.message);
    // Three kept releases: the rollback at the end goes back to the first one.
    tasksPrefix = (await freeSwarmSubnet()).replace(/\.0\.0\/16$/, '');
    daemon = await startDaemon(['--backend', 'swarm', '--swarm-subnet', `${tasksPrefix}.0.0/16`, '--kept-releases', '3']);
    assert.match(daemon.output(), /Instances run on Docker Swarm/);
    ({ gitEnv } = await registerSshKey(daemon));
    dir = checkoutExample('node-hello');
    // Its files reach every task as a layer of the release's image.
    appId = await createApp(daemon, dir, 'swarm-hello', { CC_PRE_RUN_HOOK: 'echo "$CC_DEPLOYMENT_ID" > pre-run.txt' });
    host = `${appId}.localhost`;
    const scaled = await daemon.cli(['scale', '--instances', '2'], { cwd: dir });
    assert.equal(scaled.code, 0, scaled.stderr);
    const first = await deploy('one');
    assert.equal(first.state, 'OK', (await deploymentLog(daemon, appId, first.id)).join('\n'));
  });

  after(async () => {
    await daemon?.stop();
    const node = await secondNode;
    if (typeof node !== 'string') await node.stop();
  });

  test('two replicas of one swarm service both answer through the router', async () => {
    assert.deepEqual(await runningTasks(), [2]);
    const seen = new Set<string>();
    for (let i = 0; i < 40 && seen.size < 2; i++) {
      const facts = await served();
      assert.equal(facts.release, 'one');
      seen.add(facts.instanceId);
    }
    assert.equal(seen.size, 2, `answers came from ${[...seen].join(', ')}`);
    // In each task's folder, as the app's user: the pre-run hook's file, and writes of its own.
    const tasks = await docker.json<Array<{ Id: string }>>({
      path: '/containers/json',
      query: { filters: JSON.stringify({ label: [`slipway.app=${appId}`] }) },
      what: 'list containers',
    });
    const inTask = (id: string, script: string) =>
      execFileSync('docker', ['exec', id, '/bin/sh', '-c', script], { encoding: 'utf8' }).trim();
    assert.deepEqual(
      tasks.map((c) => inTask(c.Id, 'cat pre-run.txt')),
      [deployments.one, deployments.one],
    );
    assert.equal(inTask(tasks[0]!.Id, 'echo mine > written.txt && cat written.txt'), 'mine');
    assert.equal(inTask(tasks[1]!.Id, 'cat written.txt 2>/dev/null || echo none'), 'none', "a task's writes are its own");
    const logs = await daemon.cli(['logs', '--app', appId, '--no-follow', '-n', '200']);
    assert.equal(logs.code, 0, logs.stderr);
    assert.equal(logs.stdout.match(/release one listening on 0\.0\.0\.0:8080/g)?.length, 2, 'slipway logs shows what both tasks printed');
    assert.match(
      daemon.output(),
      new RegExp(`release image 127\\.0\\.0\\.1:5000/slipway\\d+/${appId}:${deployments.one} built and pushed as `),
    );
    // The service runs the pushed content by its digest: a tag pushed again cannot change it.
    const specs = await docker.json<Array<{ Spec: { TaskTemplate: { ContainerSpec: { Image: string } } } }>>({
      path: '/services',
      query: { filters: JSON.stringify({ label: [`slipway.app=${appId}`] }) },
      what: 'list services',
    });
    assert.ok(specs.length > 0);
    for (const s of specs)
      assert.match(s.Spec.TaskTemplate.ContainerSpec.Image, new RegExp(`^127\\.0\\.0\\.1:5000/slipway\\d+/${appId}@sha256:[0-9a-f]{64}$`));
  });

  test('a task reaches no port of the control machine nor another task: its bridge port is isolated', async () => {
    const containers = await docker.json<Array<{ Id: string }>>({
      path: '/containers/json',
      query: { filters: JSON.stringify({ label: [`slipway.app=${appId}`] }) },
      what: 'list containers',
    });
    assert.equal(containers.length, 2);
    const inspect = async (id: string) =>
      Object.values(
        (
          await docker.json<{ NetworkSettings: { Networks: Record<string, { IPAddress: string; Gateway: string }> } }>({
            path: `/containers/${id}/json`,
            what: 'inspect',
          })
        ).NetworkSettings.Networks,
      )[0]!;
    const [mine, other] = await Promise.all(containers.map((c) => inspect(c.Id)));
    // A server of the machine open to every address, as a careless service would be.
    const server = net.createServer((socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    const port = (server.address() as net.AddressInfo).port;
    const localGateway = daemon.subnet.replace(/\.0\.0\/16$/, '.0.1');
    // As an attacker in the task would: a TCP connection from inside its network namespace.
    const probe = (host: string, port: number) =>
      execFileSync('docker', ['exec', containers[0]!.Id, '/usr/bin/node', '-e', PROBE, host, String(port)], { encoding: 'utf8' }).trim();
    try {
      assert.equal(probe(mine!.Gateway, port), 'refused');
      assert.equal(probe(localGateway, port), 'refused');
      assert.equal(probe(other!.IPAddress, 8080), 'refused');
      const bridge = `slipway${1000 + Number(daemon.subnet.split('.')[1])}`;
      const ports = execFileSync('ip', ['-d', '-o', 'link', 'show', 'master', bridge], { encoding: 'utf8' }).trim().split('\n');
      assert.equal(ports.length, 2, ports.join('\n'));
      for (const line of ports) assert.match(line, /isolated on/);
      // The probe does connect where nothing stops it: the task's own server.
      assert.equal(probe(mine!.IPAddress, 8080), 'connected');
    } finally {
      server.close();
    }
  });

  test('a redeploy under keep-alive load fails no request and ends on the new release', async () => {
    const { result, ok, failures } = await underLoad(() => deploy('two'));
    assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
    assert.deepEqual(failures, [], `${failures.length} failed of ${ok + failures.length}`);
    assert.ok(ok > 20, `only ${ok} requests during the deployment`);
    assert.equal((await served()).release, 'two');
    console.log(`# ${ok} requests through the router during the redeploy, none failed`);
    // The old release's service drains, then goes.
    await waitUntil("the old release's service to go", async () => (await runningTasks()).join() === '2');
  });

  test('a failed health check leaves the previous release serving', async () => {
    const set = await daemon.cli(['env', 'set', 'CC_HEALTH_CHECK_PATH', '/missing'], { cwd: dir });
    assert.equal(set.code, 0, set.stderr);
    const result = await deploy('three');
    assert.notEqual(result.state, 'OK');
    const log = (await deploymentLog(daemon, appId, result.id)).join('\n');
    assert.match(log, /404/, log);
    assert.equal((await served()).release, 'two');
    assert.deepEqual(await runningTasks(), [2]);
    const removed = await daemon.cli(['env', 'rm', 'CC_HEALTH_CHECK_PATH'], { cwd: dir });
    assert.equal(removed.code, 0, removed.stderr);
  });

  test('a scale to 3 adds a replica that takes requests under keep-alive load, none failing; a scale to 1 takes two away', async () => {
    const {
      result: up,
      ok,
      failures,
      instances,
    } = await underLoad(async () => {
      const r = await daemon.cli(['scale', '--instances', '3'], { cwd: dir });
      await waitUntil('three running tasks', async () => (await runningTasks()).join() === '3');
      // Requests go on a moment after the router took the new replica.
      await new Promise((r) => setTimeout(r, 2000));
      return r;
    });
    assert.equal(up.code, 0, up.stderr);
    assert.deepEqual(failures, [], `${failures.length} failed of ${ok + failures.length}`);
    assert.equal(instances.size, 3, `answers came from ${[...instances].join(', ')}`);
    const down = await underLoad(async () => {
      const r = await daemon.cli(['scale', '--instances', '1'], { cwd: dir });
      await waitUntil('one running task', async () => (await runningTasks()).join() === '1');
      return r;
    });
    assert.equal(down.result.code, 0, down.result.stderr);
    assert.deepEqual(down.failures, [], `${down.failures.length} failed of ${down.ok + down.failures.length}`);
    assert.equal((await served()).release, 'two');
  });

  test("with a range, the replicas' CPU is read from Docker and a low load scales them in", async () => {
    const two = await daemon.cli(['scale', '--instances', '2'], { cwd: dir });
    assert.equal(two.code, 0, two.stderr);
    await waitUntil('two running tasks', async () => (await runningTasks()).join() === '2');
    const ranged = await daemon.cli(['scale', '--min-instances', '1', '--autoscaling', 'in-after=4s,cooldown=2s'], { cwd: dir });
    assert.equal(ranged.code, 0, ranged.stderr);
    let down: { direction: string; from: number; to: number; reason: string; outcome: string } | undefined;
    await waitUntil(
      'a scale-in decision',
      async () => {
        const shown = await daemon.cli(['scale', '--format', 'json'], { cwd: dir });
        down = (JSON.parse(shown.stdout) as { decisions: Array<NonNullable<typeof down>> }).decisions.find((d) => d.direction === 'down');
        return down !== undefined;
      },
      90_000,
    );
    assert.ok(down);
    assert.deepEqual([down.from, down.to, down.outcome], [2, 1, 'done']);
    // Scaling in needs the CPU measured: the replicas' stats, as Docker reads them.
    assert.match(down.reason, /^CPU \d+% of 2 instances for \d+ s \(under 30% on 1\)$/);
    await waitUntil('one running task', async () => (await runningTasks()).join() === '1');
    const fixed = await daemon.cli(['scale', '--instances', '1', '--autoscaling', 'default'], { cwd: dir });
    assert.equal(fixed.code, 0, fixed.stderr);
  });

  test('rollback serves the first release again from its image', async () => {
    const back = await daemon.cli(['rollback', deployments.one!, '--app', appId]);
    assert.equal(back.code, 0, back.stderr);
    await waitUntil('release one served', async () => (await served()).release === 'one');
    await waitUntil('the replaced service to go', async () => (await runningTasks()).join() === '1');
  });

  test('slipway run runs the command as a swarm task of the release, with its standard input, streams its output and returns its exit code', async () => {
    const runServices = async () =>
      (
        await docker.json<unknown[]>({
          path: '/services',
          query: { filters: JSON.stringify({ label: [`slipway.app=${appId}`, 'slipway.role=run'] }) },
          what: 'list services',
        })
      ).length;
    const script =
      "console.log('run as ' + process.getuid() + ' ' + process.env.INSTANCE_TYPE + ' ' + require('node:fs').readFileSync('RELEASE', 'utf8').trim()); console.error('to stderr'); setTimeout(() => process.exit(3), 1500)";
    const run = daemon.cli(['run', '--app', appId, '--', 'node', '-e', script]);
    await waitUntil('the one-off task', async () => (await runServices()) === 1);
    const result = await run;
    assert.equal(result.code, 3, result.stderr);
    assert.match(result.stdout, /^run as [1-9]\d* run one$/m);
    assert.match(result.stderr, /to stderr/);
    assert.equal(await runServices(), 0, 'the job goes with its end');
    // Standard input reaches the command, and its end ends the command's input.
    const cat = await daemon.cli(['run', '--app', appId, '--', 'cat'], { stdin: 'hello from stdin\nsecond line\n' });
    assert.equal(cat.code, 0, cat.stderr);
    assert.equal(cat.stdout, 'hello from stdin\nsecond line\n');
    // Nothing of the jobs is left running: a leftover container would hold the tasks' network.
    const runContainers = async () =>
      (
        await docker.json<Array<{ Labels: Record<string, string> }>>({
          path: '/containers/json',
          query: { filters: JSON.stringify({ label: [`slipway.app=${appId}`] }) },
          what: 'list containers',
        })
      ).filter((c) => /-o-/.test(c.Labels['com.docker.swarm.service.name'] ?? '')).length;
    await waitUntil('the jobs’ containers to end', async () => (await runContainers()) === 0);
  });

  test('a task reaches the add-on its app is linked to, on the control machine, with the same variables; a worker runs beside it, restarted on failure', async () => {
    const addonsDir = checkoutExample('node-addons');
    const addonsApp = await createApp(daemon, addonsDir, 'swarm-addons', {
      CC_WORKER_COMMAND: 'echo "tick $REDIS_HOST $INSTANCE_NUMBER $(id -u)"; sleep 0.3; exit 3',
      CC_WORKER_RESTART: 'on-failure',
      CC_WORKER_RESTART_DELAY: '0.5',
    });
    const created = await daemon.cli(['addon', 'create', 'redis', 'swarm-cache', '--link', addonsApp]);
    assert.equal(created.code, 0, created.stderr);
    const result = await pushAndWait(daemon, addonsDir, addonsApp, gitEnv);
    assert.equal(result.state, 'OK', (await deploymentLog(daemon, addonsApp, result.id)).join('\n'));
    const root = await getThroughRouter(daemon, `${addonsApp}.localhost`);
    assert.equal(
      JSON.parse(root.body).env.REDIS_HOST,
      daemon.subnet.replace(/\.0\.0\/16$/, '.0.1'),
      'the add-on stays on the control machine',
    );
    const cache = await getThroughRouter(daemon, `${addonsApp}.localhost`, '/cache');
    assert.equal(cache.status, 200, cache.body);
    const { set, got } = JSON.parse(cache.body) as { set: string; got: string };
    assert.equal(got, set);
    // The worker: one replica of its release's worker service, with the app's environment and user.
    const gateway = daemon.subnet.replace(/\.0\.0\/16$/, '.0.1').replace(/\./g, '\\.');
    const appLog = async () => (await daemon.cli(['logs', '--app', addonsApp, '--no-follow', '-n', '500'])).stdout;
    await waitUntil('the worker to be restarted twice', async () => ((await appLog()).match(/\[worker\] tick /g)?.length ?? 0) >= 3);
    const log = await appLog();
    assert.match(log, new RegExp(`\\[worker\\] tick ${gateway} 0 [1-9]\\d*$`, 'm'));
    assert.match(log, /worker worker exited with code 3; restarting in 0\.5 s/);
    const workers = await docker.json<Array<{ Spec: { Mode: { Replicated: { Replicas: number } } } }>>({
      path: '/services',
      query: { filters: JSON.stringify({ label: [`slipway.app=${addonsApp}`, 'slipway.role=worker'] }) },
      what: 'list services',
    });
    assert.deepEqual(
      workers.map((w) => w.Spec.Mode.Replicated.Replicas),
      [1],
    );
    const deleted = await daemon.cli(['delete', '--app', addonsApp, '--yes']);
    assert.equal(deleted.code, 0, deleted.stderr);
  });

  test('with a range of their own, the workers run in worker instances whose count follows their CPU, read from Docker', async () => {
    const workersDir = checkoutExample('node-hello');
    // The first worker instance's worker burns a core for 20 s, then idles.
    const workersApp = await createApp(daemon, workersDir, 'swarm-workers', {
      CC_WORKER_COMMAND: 'if [ "$INSTANCE_NUMBER" = 0 ]; then timeout 20 sh -c "while :; do :; done"; fi; exec sleep 100000',
    });
    const ranged = await daemon.cli([
      'scale',
      '--app',
      workersApp,
      '--min-workers',
      '1',
      '--max-workers',
      '2',
      '--autoscaling',
      'cpu-out=20,cpu-in=5,out-after=3s,in-after=4s,cooldown=2s',
    ]);
    assert.equal(ranged.code, 0, ranged.stderr);
    const result = await pushAndWait(daemon, workersDir, workersApp, gitEnv);
    assert.equal(result.state, 'OK', result.push);
    type Decision = { direction: string; from: number; to: number; reason: string; target: string };
    let up: Decision | undefined;
    await waitUntil(
      'the worker instances to scale out',
      async () => {
        const shown = await daemon.cli(['scale', '--app', workersApp, '--format', 'json']);
        up = (JSON.parse(shown.stdout) as { decisions: Decision[] }).decisions.find((d) => d.target === 'workers' && d.direction === 'up');
        return up !== undefined;
      },
      90_000,
    );
    assert.ok(up);
    assert.deepEqual([up.from, up.to], [1, 2]);
    assert.match(up.reason, /^CPU \d+% of 1 worker instance for \d+ s$/);
    const deleted = await daemon.cli(['delete', '--app', workersApp, '--yes']);
    assert.equal(deleted.code, 0, deleted.stderr);
  });

  test('on a second node, tasks answer through the router with their own identities, reach their add-on on the control machine and no other port of it nor their neighbour nor the node, stop on SIGTERM through its Docker API, and slipway run runs there', async (t) => {
    const node = await secondNode;
    if (typeof node === 'string') {
      t.skip(`no second swarm node: ${node}`);
      return;
    }
    // The operator's part: the node's share of the tasks' subnet, routed through it (docs/swarm.md).
    await node.addSubnetPart(`slipway${daemon.subnet.split('.')[1]}`, `${tasksPrefix}.200.0/24`, `${tasksPrefix}.200.1`);
    const manager = (await docker.json<{ Swarm: { NodeID: string } }>({ path: '/info', what: 'describe the manager' })).Swarm.NodeID;
    await updateNode(docker, node.nodeId, (spec) => (spec.Availability = 'active'));
    // New tasks go to the second node; the ones running here stay.
    await updateNode(docker, manager, (spec) => (spec.Availability = 'pause'));
    const appLog = async () => (await daemon.cli(['logs', '--app', appId, '--no-follow', '-n', '1000'])).stdout;
    // The add-on of the test above, on the control machine: its variables reach the tasks there too.
    const linked = await daemon.cli(['service', 'link-addon', 'swarm-cache'], { cwd: dir });
    assert.equal(linked.code, 0, linked.stderr);
    const addonEnv = await daemon.cli(['addon', 'env', 'swarm-cache', '--format', 'json']);
    assert.equal(addonEnv.code, 0, addonEnv.stderr);
    const variables = Object.fromEntries(
      (JSON.parse(addonEnv.stdout) as Array<{ name: string; value: string }>).map((v) => [v.name, v.value]),
    );
    try {
      const result = await deploy('four');
      assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
      const scaled = await daemon.cli(['scale', '--instances', '2'], { cwd: dir });
      assert.equal(scaled.code, 0, scaled.stderr);
      await waitUntil('two running tasks', async () => (await runningTasks()).join() === '2');
      const nodes = await docker.json<Array<{ NodeID: string; Status: { State: string } }>>({
        path: '/tasks',
        query: { filters: JSON.stringify({ label: [`slipway.app=${appId}`], 'desired-state': ['running'] }) },
        what: 'list tasks',
      });
      assert.deepEqual(
        nodes.map((task) => task.NodeID),
        [node.nodeId, node.nodeId],
      );
      const identities = new Set<string>();
      for (let i = 0; i < 40 && identities.size < 2; i++) {
        const facts = await served();
        assert.equal(facts.release, 'four');
        identities.add(facts.instanceId);
      }
      assert.equal(identities.size, 2, `answers came from ${[...identities].join(', ')}`);
      // From there a task reaches its app's add-on on the control machine, and no other port of
      // it; nor its neighbour on the node, nor the node itself (slipway filters the node's bridge
      // through its Docker API; the router's requests and health checks above crossed it).
      const [task, neighbour] = await node.api.json<Array<{ Id: string }>>({
        path: '/containers/json',
        query: { filters: JSON.stringify({ label: [`slipway.app=${appId}`] }) },
        what: 'list containers',
      });
      const neighbourAddress = Object.values(
        (
          await node.api.json<{ NetworkSettings: { Networks: Record<string, { IPAddress: string }> } }>({
            path: `/containers/${neighbour!.Id}/json`,
            what: 'inspect the neighbour task',
          })
        ).NetworkSettings.Networks,
      )[0]!.IPAddress;
      const server = net.createServer((socket) => socket.end());
      await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
      const port = (server.address() as net.AddressInfo).port;
      const probe = (address: string, port: number | string) =>
        execFileSync('docker', ['-H', `unix://${node.socket}`, 'exec', task!.Id, '/usr/bin/node', '-e', PROBE, address, String(port)], {
          encoding: 'utf8',
        }).trim();
      try {
        assert.equal(probe(variables.REDIS_HOST!, variables.REDIS_PORT!), 'connected');
        assert.equal(probe(variables.REDIS_HOST!, port), 'refused');
        assert.equal(probe(node.hostAddress, port), 'refused');
        assert.equal(probe(neighbourAddress, 8080), 'refused', 'the neighbour task on the same node');
        // The node's swarm port, open on its own address to the other nodes.
        assert.equal(probe(NODE_ADDRESS, 2377), 'refused', "a port of the node's own address");
        assert.match(
          daemon.output(),
          new RegExp(`swarm node ${node.nodeId}: its tasks' bridge \\S+ \\(${tasksPrefix.replace('.', '\\.')}\\.200\\.0/24\\) is filtered`),
        );
      } finally {
        server.close();
      }
      const endedBefore = (await appLog()).match(/process ended after SIGTERM/g)?.length ?? 0;
      const down = await daemon.cli(['scale', '--instances', '1'], { cwd: dir });
      assert.equal(down.code, 0, down.stderr);
      await waitUntil('one running task', async () => (await runningTasks()).join() === '1');
      await waitUntil(
        'the stopped task to end on SIGTERM',
        async () => ((await appLog()).match(/process ended after SIGTERM/g)?.length ?? 0) > endedBefore,
      );
      const addresses =
        "console.log(process.env.REDIS_HOST, Object.values(require('node:os').networkInterfaces()).flat().map((a) => a.address).join(' '))";
      const run = await daemon.cli(['run', '--app', appId, '--', 'node', '-e', addresses]);
      assert.equal(run.code, 0, run.stderr);
      assert.ok(run.stdout.startsWith(`${variables.REDIS_HOST} `), run.stdout);
      assert.match(
        run.stdout,
        new RegExp(`\\b${tasksPrefix.replace('.', '\\.')}\\.200\\.\\d+\\b`),
        "the one-off task has an address of the second node's part",
      );
      const cat = await daemon.cli(['run', '--app', appId, '--', 'cat'], { stdin: 'to the second node\n' });
      assert.equal(cat.code, 0, cat.stderr);
      assert.equal(cat.stdout, 'to the second node\n');
    } finally {
      await updateNode(docker, manager, (spec) => (spec.Availability = 'active'));
    }
  });

  test("delete removes the app's services", async () => {
    const repository = `slipway${daemon.subnet.split('.')[1]}/${appId}`;
    const tagsBefore = await registryTags(repository);
    assert.ok(tagsBefore.length > 0, 'the registry holds the release images before the delete');
    const deleted = await daemon.cli(['delete', '--app', appId, '--yes']);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.deepEqual(await registryTags(repository), [], `the registry keeps no image of the deleted app (had ${tagsBefore.join(', ')})`);
    await waitUntil('no service left', async () => (await runningTasks()).length === 0);
    assert.notEqual((await getThroughRouter(daemon, host)).status, 200);
  });
});

/** The tags the registry lists for a repository ([] for one it does not know). */
async function registryTags(repository: string): Promise<string[]> {
  const { status, body } = await registryGet(`/v2/${repository}/tags/list`, { credential: true });
  if (status === 404) return [];
  assert.equal(status, 200, body);
  return (JSON.parse(body) as { tags: string[] | null }).tags ?? [];
}

// The data plane outlives the daemon on a swarm too: SIGTERM, SIGINT and kill -9 of the daemon
// leave the app's tasks serving through the router, and the next daemon adopts them as they run.
describe('swarm tasks outlive the daemon', { skip: missing ? `swarm: ${missing}` : false }, () => {
  let daemon: TestDaemon;
  let gitEnv: NodeJS.ProcessEnv;
  let dir: string;
  let appId: string;
  let host: string;

  interface Facts {
    release: string;
    instanceId: string;
  }
  const facts = async (): Promise<Facts> => {
    const answer = await getThroughRouter(daemon, host);
    assert.equal(answer.status, 200, answer.body);
    return JSON.parse(answer.body) as Facts;
  };
  type Listed = { ID: string; Spec: { Name: string; Labels: Record<string, string> } };
  /** The services of this daemon (its owner label), of the app or all. */
  const services = async (app?: string): Promise<Listed[]> =>
    docker.json<Listed[]>({
      path: '/services',
      query: {
        filters: JSON.stringify({
          label: [`slipway.owner=slipway${daemon.subnet.split('.')[1]}`, ...(app ? [`slipway.app=${app}`] : [])],
        }),
      },
      what: 'list services',
    });
  /** The running task containers of the app, by service role: `instance` or `worker`. */
  const containers = async (role: 'instance' | 'worker'): Promise<string[]> => {
    const names = new Set((await services(appId)).filter((s) => s.Spec.Labels['slipway.role'] === role).map((s) => s.Spec.Name));
    const running = await docker.json<Array<{ Id: string; Labels: Record<string, string> }>>({
      path: '/containers/json',
      query: { filters: JSON.stringify({ label: ['com.docker.swarm.service.name'] }) },
      what: 'list containers',
    });
    return running
      .filter((c) => names.has(c.Labels['com.docker.swarm.service.name'] ?? ''))
      .map((c) => c.Id)
      .sort();
  };
  const appLog = async () => (await daemon.cli(['logs', '--app', appId, '--no-follow', '-n', '400'])).stdout;
  let swarmSubnet: string;

  before(async () => {
    swarmSubnet = await freeSwarmSubnet();
    // The platform starts on the local sandboxes; the first test moves it to Swarm.
    daemon = await startDaemon([]);
    ({ gitEnv } = await registerSshKey(daemon));
    dir = checkoutExample('node-hello');
    appId = await createApp(daemon, dir, 'swarm-outlives', {
      CC_WORKER_COMMAND: `node -e "setInterval(() => console.log('worker tick ' + Date.now()), 300)"`,
    });
    host = `${appId}.localhost`;
    newRelease(dir, 'r1');
    const result = await pushAndWait(daemon, dir, appId, gitEnv);
    assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
  });

  after(async () => {
    await daemon?.stop();
  });

  test('a start on Swarm after the local sandboxes moves the app without a failed request', { timeout: 240_000 }, async () => {
    const before = await facts();
    assert.deepEqual(await services(), [], 'no service before the switch');
    const load = steadyLoad(daemon, host);
    await sleep(500);
    assert.equal(await daemon.terminate(), 0);
    await daemon.restart({ extraArgs: ['--backend', 'swarm', '--swarm-subnet', swarmSubnet] });
    await waitUntil(
      'the instance and worker tasks of the app',
      async () => (await containers('instance')).length === 1 && (await containers('worker')).length === 1,
      120_000,
    );
    await waitUntil('a swarm task answering', async () => (await facts()).instanceId !== before.instanceId, 120_000);
    await sleep(500);
    const { failures, failureCount, counts } = await load.stop();
    assert.deepEqual(failures, [], `failed requests while the app moved to Swarm: ${failureCount}`);
    for (const [kind, count] of Object.entries(counts)) assert.ok(count > 0, `${kind} answered`);
    assert.equal((await facts()).release, before.release, 'the same release serves');
  });

  for (const how of ['SIGTERM', 'SIGINT', 'SIGKILL'] as const) {
    test(`${how} of the daemon: the app serves throughout (keep-alive, HTTP/2, new connections, POSTs) and the next daemon adopts the same task and its worker`, {
      timeout: 180_000,
    }, async () => {
      const before = await facts();
      const instance = await containers('instance');
      const worker = await containers('worker');
      const serviceIds = (await services(appId)).map((s) => s.ID).sort();
      assert.equal(instance.length, 1, 'one task of the instance');
      assert.equal(worker.length, 1, 'one task of its worker');
      assert.equal(serviceIds.length, 2, 'the release service and the worker service');
      const load = steadyLoad(daemon, host);
      await sleep(500);
      if (how === 'SIGKILL') await daemon.kill();
      else assert.equal(await daemon.terminate(how), 0);
      // Nobody runs the control plane now: the tasks alone serve, through the router.
      await sleep(1500);
      assert.deepEqual(await containers('instance'), instance, 'the task outlived the daemon');
      await daemon.restart();
      assert.match(daemon.output(), /Adopted 1 running instance\(s\) of swarm-outlives/);
      await sleep(1000);
      const { failures, failureCount, counts } = await load.stop();
      assert.deepEqual(failures, [], `failed requests: ${failureCount}`);
      for (const [kind, count] of Object.entries(counts)) assert.ok(count > 10, `${kind}: only ${count} requests`);
      assert.equal((await facts()).instanceId, before.instanceId, 'the same instance serves: adopted, not started again');
      assert.deepEqual(await containers('instance'), instance, 'the same task and container serve');
      assert.deepEqual(await containers('worker'), worker, 'the same worker task runs');
      assert.deepEqual((await services(appId)).map((s) => s.ID).sort(), serviceIds, 'no service was made or removed');
      // The firewall's table was made anew: the task's address is in its set of instances again.
      const address = Object.values(
        (
          await docker.json<{ NetworkSettings: { Networks: Record<string, { IPAddress: string }> } }>({
            path: `/containers/${instance[0]}/json`,
            what: 'inspect the task',
          })
        ).NetworkSettings.Networks,
      )[0]!.IPAddress;
      assert.ok(address.startsWith(swarmSubnet.replace(/0\.0\/16$/, '')), `${address} is in ${swarmSubnet}`);
      const table = `slipway${daemon.subnet.split('.')[1]}sw`;
      assert.match(
        execFileSync('nft', ['list', 'set', 'inet', table, 'instances'], { encoding: 'utf8' }),
        new RegExp(`\\b${address.replace(/\./g, '\\.')}\\b`),
      );
      // The new daemon follows the worker's output again.
      const since = Date.now();
      await waitUntil("the worker's lines printed after the restart in the app's log", async () =>
        [...(await appLog()).matchAll(/worker tick (\d+)/g)].some((m) => Number(m[1]) > since),
      );
    });
  }

  test('a daemon given a wrong registry password stops at start saying so, and the app serves on; the right one adopts it', {
    timeout: 120_000,
  }, async () => {
    const before = await facts();
    assert.equal(await daemon.terminate(), 0);
    const wrong = join(daemon.dataDir, 'wrong-registry-password');
    writeFileSync(wrong, 'not-the-password\n', { mode: 0o600 });
    const swarm = ['--backend', 'swarm', '--swarm-subnet', swarmSubnet];
    const refused = await daemon.restart({ extraArgs: [...swarm, '--registry-password-file', wrong] }).then(
      () => assert.fail('the daemon started with a wrong registry password'),
      (error: Error) => error.message,
    );
    assert.match(
      refused,
      /slipway could not start\. The swarm registry 127\.0\.0\.1:5000 refused user "slipway" with the password given \(HTTP 401\)/,
    );
    assert.match(refused, /--registry-password-file/);
    assert.doesNotMatch(refused, /not-the-password/, 'the secret is never quoted');
    assert.equal((await facts()).instanceId, before.instanceId, 'the task served on while no daemon ran');
    await daemon.restart({ extraArgs: swarm });
    assert.match(daemon.output(), /Adopted 1 running instance\(s\) of swarm-outlives/);
  });

  test("a crash of an adopted instance is told and Swarm's restart serves again with the same identity", { timeout: 120_000 }, async () => {
    const before = await facts();
    const [task] = await containers('instance');
    const crashes = async () => (await appLog()).match(/crashed: the process exited with code 3/g)?.length ?? 0;
    const crashed = await crashes();
    const answer = await getThroughRouter(daemon, host, '/crash');
    assert.equal(answer.body, 'bye');
    await waitUntil('the crash in the app log', async () => (await crashes()) > crashed);
    await waitUntil('the restarted task to serve', async () => (await facts().catch(() => undefined))?.instanceId === before.instanceId);
    assert.notDeepEqual(await containers('instance'), [task], 'Swarm started a new task');
    assert.match(await appLog(), /restarting: Swarm starts a new task/);
    await waitUntil('the running-again line', async () => /running again at /.test(await appLog()));
  });

  test('a task Swarm restarts while no daemon runs waits for its identity, which the next daemon gives it', {
    timeout: 180_000,
  }, async () => {
    const before = await facts();
    const [task] = await containers('instance');
    assert.equal(await daemon.terminate(), 0);
    // The router still sends to the task: it crashes, and Swarm starts another in its slot.
    assert.equal((await getThroughRouter(daemon, host, '/crash')).body, 'bye');
    await waitUntil('the new task', async () => {
      const now = await containers('instance');
      return now.length === 1 && now[0] !== task;
    });
    await daemon.restart();
    await waitUntil(
      'the new task to serve as the same instance',
      async () => (await facts().catch(() => undefined))?.instanceId === before.instanceId,
    );
    assert.match(await appLog(), /adopted while its task starts/);
    await waitUntil('the running-again line', async () =>
      /running again at /.test((await appLog()).split('adopted while its task starts').at(-1)!),
    );
  });

  test('a daemon killed during a redeploy: the next one keeps one release serving and stops the other, no request failing', {
    timeout: 300_000,
  }, async () => {
    const load = steadyLoad(daemon, host);
    try {
      newRelease(dir, 'r2');
      const url = `git+ssh://git@127.0.0.1:${daemon.sshPort}/${appId}.git`;
      const push = await gitPush(dir, url, gitEnv);
      assert.equal(push.code, 0, push.output);
      // The new release's task runs: the daemon dies before, during or just after the switch.
      await waitUntil("the new release's task", async () => (await containers('instance')).length === 2, 240_000);
      await daemon.kill();
      await daemon.restart();
      await waitUntil(
        'one release left',
        async () => (await containers('instance')).length === 1 && (await containers('worker')).length === 1,
      );
    } finally {
      const { failures, failureCount, counts } = await load.stop();
      assert.deepEqual(failures, [], `failed requests: ${failureCount}`);
      for (const [kind, count] of Object.entries(counts)) assert.ok(count > 10, `${kind}: only ${count} requests`);
    }
    const left = await services(appId);
    assert.equal(new Set(left.map((s) => s.Spec.Labels['slipway.deployment'])).size, 1, 'the services of one release');
    const served = await facts();
    const status = await daemon.cli(['activity', '--app', appId, '--format', 'json', '--limit', '5']);
    const current = (JSON.parse(status.stdout) as Array<{ id: string; state: string }>).find((d) => d.state === 'OK');
    assert.equal(left[0]!.Spec.Labels['slipway.deployment'], current?.id, 'the current release is the one left');
    console.log(`# after the kill, release ${served.release} serves`);
  });

  test('a redeploy and a scale act on adopted instances', { timeout: 300_000 }, async () => {
    await daemon.terminate();
    await daemon.restart();
    const adopted = await containers('instance');
    const load = steadyLoad(daemon, host);
    newRelease(dir, 'r3');
    const result = await pushAndWait(daemon, dir, appId, gitEnv);
    assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
    await waitUntil('the adopted task to go', async () => !(await containers('instance')).some((c) => adopted.includes(c)));
    const { failures, failureCount } = await load.stop();
    assert.deepEqual(failures, [], `failed requests: ${failureCount}`);
    assert.equal((await facts()).release, 'r3');
    // Adopted again, then scaled: the new replica joins the adopted service.
    await daemon.terminate();
    await daemon.restart();
    const ids = (await services(appId)).map((s) => s.ID).sort();
    const [adoptedTask] = await containers('instance');
    const up = await daemon.cli(['scale', '--instances', '2'], { cwd: dir });
    assert.equal(up.code, 0, up.stderr);
    await waitUntil('two instances', async () => (await containers('instance')).length === 2);
    assert.ok((await containers('instance')).includes(adoptedTask!), 'the adopted task runs on: a label change restarts no task');
    assert.doesNotMatch(daemon.output(), /built and pushed/, "the release's image of the earlier run is used again");
    assert.deepEqual((await services(appId)).map((s) => s.ID).sort(), ids, 'the replicas were added to the adopted services');
    const seen = new Set<string>();
    for (let i = 0; i < 40 && seen.size < 2; i++) seen.add((await facts()).instanceId);
    assert.equal(seen.size, 2);
    const down = await daemon.cli(['scale', '--instances', '1'], { cwd: dir });
    assert.equal(down.code, 0, down.stderr);
    await waitUntil('one instance', async () => (await containers('instance')).length === 1);
  });

  test('a one-off command ends with the daemon, whether it stops or is killed', { timeout: 180_000 }, async () => {
    const runs = async () => (await services(appId)).filter((s) => s.Spec.Labels['slipway.role'] === 'run');
    /** Whether the command runs in its job's task (an exec beside the task's holder). */
    const commandRuns = async () => {
      const [job] = await runs();
      if (!job) return false;
      const running = await docker.json<Array<{ Id: string; Labels: Record<string, string> }>>({
        path: '/containers/json',
        query: { filters: JSON.stringify({ label: [`com.docker.swarm.service.id=${job.ID}`] }) },
        what: 'list containers',
      });
      if (running.length !== 1) return false;
      const top = await docker.json<{ Processes: string[][] }>({ path: `/containers/${running[0]!.Id}/top`, what: 'list processes' });
      return top.Processes.some((p) => p.at(-1) === 'sleep 600');
    };
    for (const how of ['SIGTERM', 'SIGKILL'] as const) {
      const run = daemon.cli(['run', '--app', appId, '--', 'sleep', '600'], { timeoutMs: 120_000 });
      await waitUntil('the one-off command to run', commandRuns);
      if (how === 'SIGKILL') await daemon.kill();
      else {
        assert.equal(await daemon.terminate(), 0);
        assert.deepEqual(await runs(), [], 'the job went with the daemon');
      }
      const ended = await run;
      assert.notEqual(ended.code, 0);
      assert.notEqual(ended.code, null, 'the command ended with the daemon, not at the timeout');
      await daemon.restart();
      assert.deepEqual(await runs(), [], 'no one-off job after the start');
      assert.equal(await commandRuns(), false);
    }
  });

  test('slipway system stop removes the services', { timeout: 180_000 }, async () => {
    assert.ok((await services()).length > 0);
    const serving = (await facts()).release;
    const stopped = await daemon.cli(['system', 'stop', '--yes'], { timeoutMs: 120_000 });
    assert.equal(stopped.code, 0, stopped.stderr);
    await waitUntil('no service of the daemon', async () => (await services()).length === 0);
    const pid = daemon.pid();
    await waitUntil('the daemon to exit', async () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    });
    await daemon.restart();
    assert.equal((await facts()).release, serving, 'the next start serves the app again');
  });

  test('a start on the local sandboxes after Swarm switches the app back without a failed request and removes the services', {
    timeout: 240_000,
  }, async () => {
    const before = await facts();
    assert.ok((await services()).length > 0);
    const load = steadyLoad(daemon, host);
    await sleep(500);
    assert.equal(await daemon.terminate(), 0);
    await daemon.restart({ extraArgs: ['--swarm-subnet', swarmSubnet] });
    await waitUntil('no service of the daemon', async () => (await services()).length === 0, 120_000);
    await sleep(500);
    const { failures, failureCount, counts } = await load.stop();
    assert.deepEqual(failures, [], `failed requests while the app moved back: ${failureCount}`);
    for (const [kind, count] of Object.entries(counts)) assert.ok(count > 0, `${kind} answered`);
    const after = await facts();
    assert.equal(after.release, before.release);
    assert.notEqual(after.instanceId, before.instanceId, 'a local instance serves now');
    // The line comes once the tasks' network and firewall table are gone too, after the services.
    await waitUntil('the daemon to say the services are removed', async () =>
      /swarm services of the earlier start are removed/.test(daemon.output()),
    );
  });
});

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
}
