/**
 * "Another host" for the tests: a network namespace of the test's own with a veth to this
 * machine (10.253.<n>.0/30: .1 on the host, .2 inside), reached by slipway's builds the way they
 * reach any outside server, through the host's forwarding and NAT. A server the test runs on the
 * host is exposed there by a small TCP forwarder inside the namespace, which connects back to
 * the host side of the veth (traffic that arrives from the veth, not from slipway's bridge).
 * Builds cannot reach the host's own addresses, loopback included: that is the point.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';

export interface RemoteHost {
  /** The address servers appear at, e.g. 10.253.17.2. */
  address: string;
  /** The host side of the link: test servers listen here so the forwarder can reach them. */
  hostSideAddress: string;
  /** Exposes a server listening on hostSideAddress:port at address:port. */
  expose(port: number): Promise<void>;
  close(): void;
}

const FORWARDER = `
const net = require('node:net');
const [port, target] = process.argv.slice(-2);
net.createServer((client) => {
  const upstream = net.connect(Number(port), target);
  client.pipe(upstream).pipe(client);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
}).listen(Number(port), '0.0.0.0', () => console.log('listening'));
`;

function ip(...args: string[]): void {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr.trim()}`);
}

function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, host, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
    s.setTimeout(500, () => {
      s.destroy();
      resolve(false);
    });
  });
}

/**
 * By default at 10.253.<n>.2/30; `at` puts it elsewhere (a stand-in for a metadata service at a
 * link-local address, a machine of a private network), on a /24 of its own.
 */
export function startRemoteHost(at?: { name: string; address: string; hostSideAddress: string }): RemoteHost {
  const n = 1 + Math.floor(Math.random() * 250);
  const namespace = at ? `slwrh${at.name}` : `slwrh${n}`;
  const veth = `${namespace}h`;
  const hostSideAddress = at?.hostSideAddress ?? `10.253.${n}.1`;
  const address = at?.address ?? `10.253.${n}.2`;
  const prefix = at ? 24 : 30;
  spawnSync('ip', ['netns', 'delete', namespace]);
  spawnSync('ip', ['link', 'delete', veth]);
  ip('netns', 'add', namespace);
  ip('link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', namespace);
  ip('address', 'add', `${hostSideAddress}/${prefix}`, 'dev', veth);
  ip('link', 'set', veth, 'up');
  ip('-n', namespace, 'link', 'set', 'lo', 'up');
  ip('-n', namespace, 'address', 'add', `${address}/${prefix}`, 'dev', 'eth0');
  ip('-n', namespace, 'link', 'set', 'eth0', 'up');
  ip('-n', namespace, 'route', 'add', 'default', 'via', hostSideAddress);
  const forwarders: ChildProcess[] = [];
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    for (const f of forwarders) f.kill('SIGKILL');
    spawnSync('ip', ['netns', 'delete', namespace]);
    spawnSync('ip', ['link', 'delete', veth]);
  };
  process.once('exit', close);
  return {
    address,
    hostSideAddress,
    async expose(port) {
      const child = spawn('ip', ['netns', 'exec', namespace, process.execPath, '-e', FORWARDER, String(port), hostSideAddress], {
        stdio: 'ignore',
      });
      forwarders.push(child);
      const deadline = Date.now() + 10_000;
      while (!(await reachable(address, port))) {
        if (Date.now() > deadline) throw new Error(`the forwarder on ${address}:${port} did not start`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close,
  };
}
