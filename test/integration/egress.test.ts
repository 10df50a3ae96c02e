import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutFixture, createApp, deploymentLog, getThroughRouter, pushAndWait, registerSshKey } from '../support/deploy.js';
import { startRemoteHost, type RemoteHost } from '../support/remote-host.js';

// Egress policy: builds, instances and one-off commands reach the public internet, the router
// and their add-ons, never a link-local address (a cloud machine's metadata service) nor a
// private network, unless the operator opens a range with --egress-allow. The test hosts live
// in network namespaces of the test's own, at 169.254.77.77 and 192.168.233.7.
let daemon: TestDaemon;
let appId: string;
let host: string;
const hosts: RemoteHost[] = [];
const servers: net.Server[] = [];
let metadata: string;
let privateMachine: string;

/** A TCP server on the host side of the test host's link, exposed at the test host's address. */
async function testHost(name: string, address: string, hostSideAddress: string): Promise<string> {
  const remote = startRemoteHost({ name, address, hostSideAddress });
  hosts.push(remote);
  const server = net.createServer((socket) => socket.end('hello\n'));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, hostSideAddress, resolve));
  const port = (server.address() as net.AddressInfo).port;
  // Positive control: the test host answers (expose waits until this machine reaches it there).
  await remote.expose(port);
  return `${address}:${port}`;
}

/** What the app's instance saw trying each target. */
async function fromInstance(targets: string[]): Promise<Record<string, string>> {
  const answer = await getThroughRouter(daemon, host, `/network?targets=${encodeURIComponent(targets.join(','))}`, {}, 30_000);
  assert.equal(answer.status, 200, answer.body);
  return JSON.parse(answer.body) as Record<string, string>;
}

before(async () => {
  metadata = await testHost('md', '169.254.77.77', '169.254.77.1');
  privateMachine = await testHost('pn', '192.168.233.7', '192.168.233.1');
  daemon = await startDaemon();
  const { gitEnv } = await registerSshKey(daemon);
  const dir = checkoutFixture('hostile/tenant-attacker');
  appId = await createApp(daemon, dir, 'egress', { ATTACK_TARGETS: [metadata, privateMachine].join(',') });
  host = `${appId}.localhost`;
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
});

after(async () => {
  await daemon?.stop();
  for (const server of servers) server.close();
  for (const remote of hosts) remote.close();
});

test('a build reaches neither the link-local nor the private test host', async () => {
  const list = JSON.parse((await daemon.cli(['activity', '--app', appId, '--format', 'json'])).stdout) as Array<{ id: string }>;
  const log = (await deploymentLog(daemon, appId, list[0]!.id)).join('\n');
  assert.match(log, /build-probe self connected/, 'the probe sees a connection succeed (positive control)');
  for (const target of [metadata, privateMachine]) {
    const seen = new RegExp(`build-probe ${target.replaceAll('.', '\\.')} (\\S+)`).exec(log)?.[1];
    assert.ok(seen !== undefined, `the build tried ${target}`);
    assert.notEqual(seen, 'connected', `the build reached ${target}`);
  }
});

test('an instance and a one-off command reach neither test host', async () => {
  const seen = await fromInstance([metadata, privateMachine]);
  for (const target of [metadata, privateMachine]) assert.notEqual(seen[target], 'connected', `the instance reached ${target}`);
  const [address, port] = metadata.split(':');
  const run = await daemon.cli(
    ['run', '--app', appId, '--', 'node', '-e', `require('./probe.js')('${address}', ${port}).then((o) => console.log('outcome ' + o))`],
    { timeoutMs: 60_000 },
  );
  assert.match(run.stdout, /outcome (\S+)/, run.stderr);
  assert.doesNotMatch(run.stdout, /outcome connected/, 'the one-off command reached the metadata stand-in');
});

test('--egress-allow opens a private range to the apps, and that range only', async () => {
  assert.equal(await daemon.terminate(), 0);
  await daemon.restart({ extraArgs: ['--egress-allow', '192.168.233.0/24'] });
  const seen = await fromInstance([metadata, privateMachine]);
  assert.equal(seen[privateMachine], 'connected', 'the allowed private machine is reached');
  assert.notEqual(seen[metadata], 'connected', 'the metadata stand-in still is not');
  const refused = await daemon.cli(['server', '--egress-allow', '192.168.233.7/24', '--data-dir', '/nonexistent-slipway']);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /--egress-allow: 192\.168\.233\.7\/24 is not the start of a \/24 range: use 192\.168\.233\.0\/24/);
});
