import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import type { LocalNetnsBackend } from './local-netns-backend.js';
import {
  contractSpec,
  writeContractRelease,
  CONTRACT_NODE,
  setContractSandbox,
} from '../../../test/contracts/instance-backend.contract.js';
import {
  localBackendMissing,
  makeTestLocalBackend,
  TEST_BRIDGE as BRIDGE,
  TEST_PREFIX as PREFIX,
} from '../../../test/support/local-backend.js';
import { runCommand } from '../../executor/run-command.js';
import { waitUntil } from '../../../test/support/wait.js';

// The interface's behaviour is checked by test/contracts/instance-backend.test.ts; these are the
// local backend's own promises (namespaces, addresses, leftovers of a crashed daemon).
const SYS_ENV = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };

async function sh(argv: string[]): Promise<{ code: number | null; out: string }> {
  const lines: string[] = [];
  const r = await runCommand({ argv, cwd: '/', env: SYS_ENV, onLine: (s, l) => s === 'out' && lines.push(l) });
  return { code: r.exitCode, out: lines.join('\n') };
}

async function makeBackend() {
  const made = await makeTestLocalBackend();
  setContractSandbox(made.sandbox);
  return made;
}

const skip = localBackendMissing() ?? false;

describe('LocalNetnsBackend specifics', { skip }, () => {
  let backend: LocalNetnsBackend;
  let cleanup: () => Promise<void>;
  let releaseDir: string;

  before(async () => {
    // Leftovers of a "crashed daemon" with our prefix, which init() must remove.
    await sh(['ip', 'netns', 'add', `${PREFIX}-999`]);
    await sh(['ip', 'link', 'add', 'name', `${PREFIX}-998h`, 'type', 'veth', 'peer', 'name', `${PREFIX}-998i`]);
    ({ backend, cleanup } = await makeBackend());
    releaseDir = writeContractRelease({
      'client.cjs': `
        const net = require('node:net');
        const socket = net.connect(Number(process.env.TARGET_PORT), process.env.TARGET_HOST, () => socket.write('ping\\n'));
        socket.setEncoding('utf8');
        socket.on('data', (d) => { console.log('host said: ' + d.trim()); socket.end(); });
        socket.on('error', (e) => console.error('connect failed: ' + e.message));
        setInterval(() => {}, 1000);
      `,
    });
  });

  after(async () => {
    await cleanup?.();
    if (releaseDir) rmSync(releaseDir, { recursive: true, force: true });
  });

  test('init removed namespaces and veths left by a previous run with the same prefix', async () => {
    assert.doesNotMatch((await sh(['ip', 'netns', 'list'])).out, new RegExp(`^${PREFIX}-999\\b`, 'm'));
    assert.notEqual((await sh(['ip', 'link', 'show', 'dev', `${PREFIX}-998h`])).code, 0);
  });

  test('the bridge holds the gateway address, the first of the subnet', async () => {
    assert.equal(backend.gatewayAddress, '10.78.0.1');
    assert.match((await sh(['ip', '-o', '-4', 'address', 'show', 'dev', BRIDGE])).out, /inet 10\.78\.0\.1\/16 /);
  });

  test('an instance reaches a TCP server the host binds on the gateway address', async () => {
    const server = net.createServer((socket) => {
      socket.setEncoding('utf8');
      socket.once('data', () => socket.end('pong from host\n'));
    });
    await new Promise<void>((r) => server.listen(0, backend.gatewayAddress, r));
    const port = (server.address() as net.AddressInfo).port;
    const s = contractSpec(releaseDir, {
      script: 'client.cjs',
      extraEnv: { TARGET_HOST: backend.gatewayAddress, TARGET_PORT: String(port) },
    });
    const inst = await backend.start(s.spec);
    try {
      await waitUntil('the reply from the host', () => s.logs.some((l) => l.line === 'host said: pong from host'), 10_000);
    } finally {
      await inst.stop(1000);
      server.close();
    }
  });

  test('kernel objects have short names, live while the instance runs and are gone after stop', async () => {
    const s = contractSpec(releaseDir, {
      instanceId: 'a'.repeat(150),
      command: [
        'sh',
        '-c',
        'grep -E "^(Uid|Gid|Groups|CapEff|NoNewPrivs):" /proc/self/status; ip -o -4 address show 2>/dev/null || cat /proc/net/fib_trie >/dev/null; exec sleep 60',
      ],
    });
    const inst = await backend.start(s.spec);
    const namespaces = (await sh(['ip', 'netns', 'list'])).out;
    const ns = /^(slwt-\d+)\b/m.exec(namespaces)?.[1];
    assert.ok(ns && ns.length <= 15, namespaces);
    assert.match(inst.address, /^10\.78\.\d+\.\d+$/);
    const addr = (await sh(['ip', '-n', ns!, '-o', '-4', 'address', 'show', 'dev', 'eth0'])).out;
    assert.match(addr, new RegExp(`inet ${inst.address.replace(/\./g, '\\.')}/16 `));
    const route = (await sh(['ip', '-n', ns!, 'route', 'show', 'default'])).out;
    assert.match(route, /default via 10\.78\.0\.1 dev eth0/);
    assert.match((await sh(['ip', '-n', ns!, '-o', 'link', 'show', 'dev', 'lo'])).out, /UP|UNKNOWN/);

    await waitUntil('the status lines', () => s.logs.some((l) => l.line.startsWith('NoNewPrivs:')), 10_000);
    const status = Object.fromEntries(
      s.logs
        .filter((l) => l.stream === 'out' && /^[A-Za-z]+:/.test(l.line))
        .map((l) => [l.line.split(':')[0], l.line.split(':')[1]!.trim()]),
    );
    const uids = status.Uid!.split(/\s+/);
    assert.equal(new Set(uids).size, 1, `real, effective, saved and fs uid differ: ${status.Uid}`);
    assert.notEqual(uids[0], '0');
    assert.equal(status.Groups, '');
    assert.equal(status.CapEff, '0000000000000000');
    assert.equal(status.NoNewPrivs, '1');

    await inst.stop(1000);
    assert.doesNotMatch((await sh(['ip', 'netns', 'list'])).out, new RegExp(`^${ns}\\b`, 'm'));
    assert.doesNotMatch((await sh(['ip', '-o', 'link', 'show'])).out, new RegExp(`\\b${ns}h\\b`));
  });

  test('conmon holds the sandbox on the host, tini and the app under it; a stop leaves neither it nor its bundle', async () => {
    const bundles = `/run/slipway-test/${PREFIX}/bundles`;
    const children = (pid: number) =>
      readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    const monitors = () =>
      readdirSync('/proc')
        .filter((e) => /^\d+$/.test(e))
        .map(Number)
        .filter((pid) => {
          try {
            return cmdline(pid).startsWith('/usr/bin/conmon ') && cmdline(pid).includes(`--bundle ${bundles}/`);
          } catch {
            return false;
          }
        });
    const s = contractSpec(releaseDir, { command: ['sh', '-c', 'echo held; exec sleep 60'] });
    const inst = await backend.start(s.spec);
    await waitUntil('the app to print', () => s.logs.some((l) => l.line === 'held'), 10_000);
    const [monitor, ...others] = monitors();
    assert.ok(monitor !== undefined && others.length === 0, `one conmon for the one sandbox: ${monitors()}`);
    const [init] = children(monitor);
    assert.match(cmdline(init!), /^\/usr\/bin\/tini -g -- sh -c/, "the sandbox's init is conmon's child");
    assert.deepEqual(children(init!).map(cmdline), ['sleep 60'], 'the app under it');
    assert.equal(readdirSync(bundles).length, 1, 'the bundle of the running sandbox');

    await inst.stop(1000);
    assert.deepEqual(monitors(), [], 'conmon ended with its sandbox');
    assert.deepEqual(readdirSync(bundles), [], 'the bundle (exit file, pid file) is removed');
    assert.doesNotMatch(
      (await sh(['runc', '--root', `/run/slipway-test/${PREFIX}/runc`, 'list', '-q'])).out,
      /\S/,
      'runc knows no sandbox',
    );
  });

  test('an id that is not a plain identifier is refused before any command runs', async () => {
    for (const bad of ['', '../x', 'a b', 'x;reboot', '-n']) {
      const s = contractSpec(releaseDir, { instanceId: bad });
      await assert.rejects(backend.start(s.spec), /Invalid instance id/);
    }
    assert.deepEqual(backend.list(), []);
  });

  test('restart delays grow: the second restart waits longer than the first', async () => {
    const s = contractSpec(releaseDir, { command: [CONTRACT_NODE, '-e', 'process.exit(1)'] });
    const inst = await backend.start(s.spec);
    try {
      await waitUntil('two restarts scheduled', () => s.logs.filter((l) => /restarting in/.test(l.line)).length >= 2, 10_000);
      const delays = s.logs.filter((l) => /restarting in/.test(l.line)).map((l) => l.line);
      assert.match(delays[0]!, /restarting in 1 s \(restart #1\)/);
      assert.match(delays[1]!, /restarting in 2 s \(restart #2\)/);
    } finally {
      await inst.stop(1000);
    }
  });
});
