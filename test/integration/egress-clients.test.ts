import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { commitAll, createApp, pushAndWait, registerSshKey } from '../support/deploy.js';
import { freePort } from '../support/free-port.js';
import { startRemoteHost, type RemoteHost } from '../support/remote-host.js';
import { startTestDns, type TestDns } from '../support/test-dns.js';
import { waitUntil } from '../support/wait.js';

// docs/security.md, "The daemon's own clients reach only the outside world": webhooks and drains
// to a link-local test host (a metadata service's range) and a private one are refused, by
// address at creation and by name at connection (DNS rebinding), until the operator opens their
// ranges with --egress-allow. The test hosts are network namespaces of the test's own, at
// 169.254.78.78, 192.168.234.7 and 203.0.113.7 (a documentation range standing for a public
// host); names resolve at a real DNS server on loopback.
const LINK_LOCAL = '169.254.78.78';
const PRIVATE = '192.168.234.7';
const PUBLIC = '203.0.113.7';
const REBIND = 'rebind.egress.test';

let daemon: TestDaemon;
let dns: TestDns;
let port: number;
let appDir: string;
let appId: string;
let gitEnv: NodeJS.ProcessEnv;
const hosts: RemoteHost[] = [];
const servers: Server[] = [];
/** What each test host's receiver got: `<address> <path>`. */
const received: string[] = [];

/** An HTTP receiver on the host side of a test host's link, exposed at the test host's address. */
async function testHost(name: string, address: string, hostSideAddress: string): Promise<void> {
  const remote = startRemoteHost({ name, address, hostSideAddress });
  hosts.push(remote);
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push(`${address} ${req.url}`);
      res.end();
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(port, hostSideAddress, resolve));
  // Positive control: this machine reaches the test host there (expose waits until it does).
  await remote.expose(port);
}

before(async () => {
  port = await freePort();
  await testHost('egl', LINK_LOCAL, '169.254.78.1');
  await testHost('egp', PRIVATE, '192.168.234.1');
  await testHost('egq', PUBLIC, '203.0.113.1');
  dns = await startTestDns();
  await dns.setA(REBIND, [PUBLIC]);
  await dns.setA('metadata.egress.test', [LINK_LOCAL]);
  daemon = await startDaemon(['--dns-resolver', dns.address]);
  ({ gitEnv } = await registerSshKey(daemon));
  // No package.json: each push fails at once (a deployment.failed event), without fetching any tool.
  appDir = mkdtempSync(join(tmpdir(), 'slipway-egress-'));
  writeFileSync(join(appDir, 'README'), 'not an app\n');
  execFileSync('git', ['init', '-q', '-b', 'master'], { cwd: appDir });
  commitAll(appDir, 'first');
  appId = await createApp(daemon, appDir, 'egress-clients');
});

after(async () => {
  await daemon?.stop();
  await dns?.stop();
  for (const server of servers) server.close();
  for (const remote of hosts) remote.close();
});

/** Pushes a new commit; the build fails, which webhooks hear of. */
async function failDeployment(message: string): Promise<void> {
  writeFileSync(join(appDir, 'README'), `${message}\n`);
  commitAll(appDir, message);
  assert.equal((await pushAndWait(daemon, appDir, appId, gitEnv)).state, 'FAIL');
}

const cli = (args: string[]) => daemon.cli(args, { cwd: appDir });

test('a webhook or drain to a link-local or private address is refused at creation, naming --egress-allow', async () => {
  for (const [args, refusal] of [
    [
      ['webhooks', 'add', 'md', `http://${LINK_LOCAL}:${port}/md`],
      /169\.254\.78\.78 is a link-local address.*--egress-allow 169\.254\.78\.78\/32/,
    ],
    [
      ['webhooks', 'add', 'pn', `http://${PRIVATE}:${port}/pn`],
      /192\.168\.234\.7 is a private address; the operator can allow it with --egress-allow 192\.168\.234\.7\/32/,
    ],
    [['webhooks', 'add', 'mapped', `http://[::ffff:${LINK_LOCAL}]:${port}/md`], /169\.254\.78\.78 is a link-local address/],
    [
      ['webhooks', 'add', 'byname', `http://metadata.egress.test:${port}/md`],
      /metadata\.egress\.test resolves to 169\.254\.78\.78: .*link-local/,
    ],
    [['drain', 'create', 'HTTP', `http://${LINK_LOCAL}:${port}/drain`], /169\.254\.78\.78 is a link-local address.*--egress-allow/],
    [['drain', 'create', 'TCPSyslog', `tcp://${PRIVATE}:${port}`], /192\.168\.234\.7 is a private address.*--egress-allow/],
    [['drain', 'create', 'UDPSyslog', `udp://${LINK_LOCAL}:${port}`], /link-local/],
  ] as const) {
    const result = await cli([...args]);
    assert.notEqual(result.code, 0, `${args.join(' ')} was accepted`);
    assert.match(result.stderr, refusal);
  }
  const listed = JSON.parse((await cli(['webhooks', '--format', 'json'])).stdout) as { webhooks: unknown[] };
  assert.deepEqual(listed.webhooks, [], 'nothing refused was kept');
  // Positive control: a receiver at a public address is accepted.
  const accepted = await cli(['webhooks', 'add', 'rebind', `http://${REBIND}:${port}/rebind`, '--event', 'deployment.failed']);
  assert.equal(accepted.code, 0, accepted.stderr);
});

test('a name that resolves to a private address at delivery time is refused then, not sent to', async () => {
  await failDeployment('first delivery');
  await waitUntil('the delivery to the public test host', async () => received.find((r) => r === `${PUBLIC} /rebind`), 30_000);
  // The name now points at the private test host (DNS rebinding).
  await dns.setA(REBIND, [PRIVATE]);
  await failDeployment('second delivery');
  const attempt = await waitUntil(
    'the refused delivery',
    async () => {
      const listed = JSON.parse((await cli(['webhooks', 'deliveries', 'rebind', '--format', 'json'])).stdout) as {
        deliveries: Array<{ attempts: Array<{ ok: boolean; error: string | null }> }>;
      };
      return listed.deliveries.flatMap((d) => d.attempts).find((a) => !a.ok);
    },
    30_000,
  );
  assert.match(
    attempt.error ?? '',
    /rebind\.egress\.test resolves to 192\.168\.234\.7: .*private address; the operator can allow it with --egress-allow/,
  );
  assert.deepEqual(
    received.filter((r) => r.startsWith(PRIVATE)),
    [],
    'the private test host received nothing',
  );
  assert.equal(received.filter((r) => r === `${PUBLIC} /rebind`).length, 1, 'the second delivery did not go to the first address either');
});

test('with --egress-allow for their ranges, the same webhooks and drains are accepted and delivered', async () => {
  await daemon.terminate();
  await daemon.restart({
    extraArgs: ['--dns-resolver', dns.address, '--egress-allow', '169.254.78.0/24', '--egress-allow', '192.168.234.0/24'],
  });
  for (const args of [
    ['webhooks', 'add', 'md', `http://${LINK_LOCAL}:${port}/md`, '--event', 'deployment.failed'],
    ['webhooks', 'add', 'pn', `http://${PRIVATE}:${port}/pn`, '--event', 'deployment.failed'],
    ['drain', 'create', 'HTTP', `http://${LINK_LOCAL}:${port}/drain`],
    ['drain', 'create', 'TCPSyslog', `tcp://${PRIVATE}:${port}`],
  ]) {
    const result = await cli(args);
    assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
  }
  // Only the ranges allowed are open: the metadata service's own address stays refused.
  const metadata = await cli(['webhooks', 'add', 'imds', 'http://169.254.169.254/latest/meta-data/']);
  assert.notEqual(metadata.code, 0);
  assert.match(metadata.stderr, /169\.254\.169\.254 is a link-local address/);

  await failDeployment('third delivery');
  for (const expected of [`${LINK_LOCAL} /md`, `${PRIVATE} /pn`, `${PRIVATE} /rebind`]) {
    await waitUntil(expected, async () => received.find((r) => r === expected), 30_000);
  }
});
