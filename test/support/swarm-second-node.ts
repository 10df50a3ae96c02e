/**
 * A second Docker Swarm node on this machine, standing in for another machine of the operator's:
 * a network namespace of the test's own with a veth to this host, a dockerd (and its containerd)
 * inside it with folders of its own, joined to this machine's swarm as a worker, drained until a
 * test wants tasks on it. What the operator does for a worker (docs/swarm.md, "Several machines")
 * the test does here: the node's Docker API is declared with the node label slipway reads, its
 * part of the tasks' subnet is a configuration network on the node, and the control machine
 * routes that part through the node.
 *
 * The manager listens on loopback only (scripts/swarm-setup.sh) and so does the registry: inside
 * the namespace, 127.0.0.1:2377 and :5000 are forwarded over unix sockets to the host's, as a
 * real worker would reach the manager's and the registry's LAN addresses. Traffic stays between
 * loopback and the namespace's addresses. Its dockerd shares this machine's
 * /etc/docker/certs.d, so it trusts the registry's CA as a worker the operator gave the CA does,
 * and it has no login: it pulls with the credential each service carries (docs/swarm.md).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { DockerApi } from '../../src/instances/swarm/docker-api.js';
import { NODE_API_LABEL } from '../../src/instances/swarm/node-apis.js';

const NAMESPACE = 'slipway-node2';
const HOST_END = 'slnode2h';
const NODE_END = 'slnode2n';
/** A /30 between this host and the namespace, away from the subnets slipway and the tests use. */
const HOST_ADDRESS = '172.26.255.1';
export const NODE_ADDRESS = '172.26.255.2';
const RUN_DIR = '/run/slipway-test-node2';
const DATA_DIR = '/var/lib/slipway-test-node2';
/** The manager's and the registry's loopback ports, reached from the namespace. */
const FORWARDED_PORTS = [2377, 5000];

/** In the namespace: 127.0.0.1:<port> → the unix socket <dir>/<port>.sock of the host side. */
const NODE_SIDE_FORWARDER = `
const net = require('node:net');
const [dir, ...ports] = process.argv.slice(1);
for (const port of ports) {
  net.createServer((a) => {
    const b = net.connect(dir + '/' + port + '.sock');
    a.pipe(b); b.pipe(a);
    a.on('error', () => b.destroy()); b.on('error', () => a.destroy());
  }).listen(Number(port), '127.0.0.1');
}
console.log('forwarding');`;

export interface SecondNode {
  nodeId: string;
  /** The node's own Docker API (its containers). */
  api: DockerApi;
  socket: string;
  /** This machine's address on its link to the node. */
  hostAddress: string;
  /** Gives the node a part of the tasks' network (its own configuration network) and routes that part through it. */
  addSubnetPart(owner: string, part: string, gateway: string): Promise<void>;
  stop(): Promise<void>;
}

function run(argv: string[]): void {
  execFileSync(argv[0]!, argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
}

function quietly(argv: string[]): void {
  try {
    run(argv);
  } catch {
    // not there: nothing to undo
  }
}

/**
 * Removes the node's namespace and the host's end of its link. dockerd binds the namespace it
 * runs in under its exec root for containers of the host's network (slipway's filter of the
 * node's bridge runs in one) and leaves it mounted when it stops: unmounted first.
 */
function removeNamespace(): void {
  quietly(['umount', '-l', join(RUN_DIR, 'exec', 'netns', 'default')]);
  quietly(['ip', 'netns', 'del', NAMESPACE]);
  quietly(['ip', 'link', 'del', HOST_END]);
}

/**
 * Lets go of every mount under the node's data folder, deepest first: the FS buckets' sshfs
 * mounts in its volumes (dead once their holder is gone) and the folder's own shared bind.
 */
function unmountDataDir(): void {
  unmountUnder(DATA_DIR);
}

/** Every mount under a folder, deepest first (a killed dockerd leaves its containers' namespaces bound under its exec root). */
function unmountUnder(dir: string): void {
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((path) => path === dir || path.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
  for (const path of mounts) quietly(['umount', '-l', path]);
}

/** Undoes what a previous run left (a test killed midway): namespace, link, dockerd, folders. */
function removeLeftovers(): void {
  quietly(['sh', '-c', `test -f ${RUN_DIR}/dockerd.pid && kill -9 "$(cat ${RUN_DIR}/dockerd.pid)"`]);
  unmountDataDir();
  removeNamespace();
  unmountUnder(RUN_DIR);
  rmSync(RUN_DIR, { recursive: true, force: true });
  // A node left there would rejoin as the old one (its swarm state is in its data folder).
  rmSync(DATA_DIR, { recursive: true, force: true });
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`the second swarm node: ${what} did not happen within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Starts the node and joins it, drained; throws saying what failed. */
export async function startSecondSwarmNode(manager: DockerApi): Promise<SecondNode> {
  removeLeftovers();
  const socket = join(RUN_DIR, 'docker.sock');
  // The manager still lists the node of a run that did not end: it is down, and goes.
  const nodes = await manager.json<Array<{ ID: string; Spec: { Labels?: Record<string, string> } }>>({
    path: '/nodes',
    what: 'list nodes',
  });
  for (const node of nodes.filter((n) => n.Spec.Labels?.[NODE_API_LABEL] === `unix://${socket}`))
    await manager.json({ method: 'DELETE', path: `/nodes/${node.ID}`, query: { force: true }, what: 'remove a node' });
  mkdirSync(RUN_DIR, { recursive: true });
  // A real node's / is a shared mount (systemd makes it so); this machine's is not. The FS
  // buckets' holders bind a volume's folder rshared, which Docker allows on a shared mount only.
  mkdirSync(DATA_DIR, { recursive: true });
  run(['mount', '--bind', DATA_DIR, DATA_DIR]);
  run(['mount', '--make-shared', DATA_DIR]);
  run(['ip', 'netns', 'add', NAMESPACE]);
  run(['ip', 'link', 'add', HOST_END, 'type', 'veth', 'peer', 'name', NODE_END]);
  run(['ip', 'link', 'set', NODE_END, 'netns', NAMESPACE]);
  run(['ip', 'addr', 'add', `${HOST_ADDRESS}/30`, 'dev', HOST_END]);
  run(['ip', 'link', 'set', HOST_END, 'up']);
  const inside = (argv: string[]) => run(['ip', 'netns', 'exec', NAMESPACE, ...argv]);
  inside(['ip', 'link', 'set', 'lo', 'up']);
  inside(['ip', 'addr', 'add', `${NODE_ADDRESS}/30`, 'dev', NODE_END]);
  inside(['ip', 'link', 'set', NODE_END, 'up']);
  inside(['ip', 'route', 'add', 'default', 'via', HOST_ADDRESS]);
  // The node forwards between its bridge and its link to the control machine, as a worker does.
  inside(['sysctl', '-q', 'net.ipv4.ip_forward=1']);

  const hostSide = FORWARDED_PORTS.map((port) =>
    net
      .createServer((a) => {
        const b = net.connect(port, '127.0.0.1');
        a.pipe(b);
        b.pipe(a);
        a.on('error', () => b.destroy());
        b.on('error', () => a.destroy());
      })
      .listen(join(RUN_DIR, `${port}.sock`)),
  );
  const children: ChildProcess[] = [];
  // nsenter, not `ip netns exec`: that one remounts /sys, and dockerd would find no cgroups.
  const enter = ['nsenter', `--net=/run/netns/${NAMESPACE}`, '--'];
  const forwarder = spawn(
    enter[0]!,
    [...enter.slice(1), process.execPath, '-e', NODE_SIDE_FORWARDER, RUN_DIR, ...FORWARDED_PORTS.map(String)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  children.push(forwarder);
  await new Promise<void>((resolve, reject) => {
    forwarder.stdout!.once('data', () => resolve());
    forwarder.once('exit', (code) => reject(new Error(`the namespace's forwarder exited (${code})`)));
  });

  const log = openSync(join(RUN_DIR, 'dockerd.log'), 'a');
  const dockerd = spawn(
    enter[0]!,
    [
      ...enter.slice(1),
      'dockerd',
      `--data-root=${DATA_DIR}`,
      `--exec-root=${join(RUN_DIR, 'exec')}`,
      `--pidfile=${join(RUN_DIR, 'dockerd.pid')}`,
      `--host=unix://${socket}`,
      '--iptables=false',
      '--ip-masq=false',
      '--bridge=none',
      '--cgroup-parent=/slipway-test-node2',
    ],
    { stdio: ['ignore', log, log] },
  );
  children.push(dockerd);
  const api = new DockerApi(socket);

  let nodeId = '';
  const stop = async () => {
    if (nodeId) {
      await api.json({ method: 'POST', path: '/swarm/leave', query: { force: true }, what: 'leave the swarm' }).catch(() => undefined);
      await manager
        .json({ method: 'DELETE', path: `/nodes/${nodeId}`, query: { force: true }, what: 'remove the node' })
        .catch(() => undefined);
    }
    const exited = new Promise((resolve) => (dockerd.exitCode !== null ? resolve(undefined) : dockerd.once('exit', resolve)));
    dockerd.kill('SIGTERM');
    const timer = setTimeout(() => dockerd.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
    forwarder.kill('SIGKILL');
    for (const server of hostSide) server.close();
    removeNamespace();
    unmountDataDir();
    try {
      rmSync(DATA_DIR, { recursive: true, force: true });
    } catch (e) {
      console.log(`# could not remove ${DATA_DIR}: ${(e as Error).message}`);
    }
    rmSync(RUN_DIR, { recursive: true, force: true });
  };

  try {
    await waitFor('dockerd answering', async () => Boolean(await api.json({ path: '/info', what: 'describe the node' })), 60_000);
    const swarm = await manager.json<{ JoinTokens: { Worker: string } }>({ path: '/swarm', what: 'read the join tokens' });
    await api.json({
      method: 'POST',
      path: '/swarm/join',
      body: {
        ListenAddr: `${NODE_ADDRESS}:2377`,
        AdvertiseAddr: NODE_ADDRESS,
        DataPathAddr: NODE_ADDRESS,
        RemoteAddrs: ['127.0.0.1:2377'],
        JoinToken: swarm.JoinTokens.Worker,
        Availability: 'drain',
      },
      what: 'join the swarm',
    });
    nodeId = (await api.json<{ Swarm: { NodeID: string } }>({ path: '/info', what: 'describe the node' })).Swarm.NodeID;
    await updateNode(manager, nodeId, (spec) => {
      spec.Labels = { ...spec.Labels, [NODE_API_LABEL]: `unix://${socket}` };
    });
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    nodeId,
    api,
    socket,
    hostAddress: HOST_ADDRESS,
    stop,
    addSubnetPart: async (owner, part, gateway) => {
      await api.json({
        method: 'POST',
        path: '/networks/create',
        body: {
          Name: `${owner}-instances-config`,
          ConfigOnly: true,
          IPAM: { Config: [{ Subnet: part, Gateway: gateway }] },
          Options: { 'com.docker.network.bridge.name': 'slnode2sw0' },
        },
        what: "create the node's part of the tasks' network",
      });
      run(['ip', 'route', 'replace', part, 'via', NODE_ADDRESS]);
    },
  };
}

/** Rewrites a node's spec through the manager (Docker wants the whole spec and its version). */
export async function updateNode(manager: DockerApi, nodeId: string, change: (spec: Record<string, any>) => void): Promise<void> {
  const node = await manager.json<{ Version: { Index: number }; Spec: Record<string, any> }>({
    path: `/nodes/${nodeId}`,
    what: 'inspect a node',
  });
  change(node.Spec);
  await manager.json({
    method: 'POST',
    path: `/nodes/${nodeId}/update`,
    query: { version: node.Version.Index },
    body: node.Spec,
    what: 'update a node',
  });
}
