/**
 * Two real daemons on one machine. The second one asked for the subnet of the first (so for
 * its bridge, namespaces, cgroup root and firewall table) must refuse before touching any of
 * them, saying to pick another --subnet; the first daemon's app keeps serving. And should the
 * bridge disappear anyway, the router answers with its own error page: packets for instance
 * addresses never leave the machine by the default route (where something else answered a
 * bare 403). Two daemons on their own subnets both create PostgreSQL add-ons: each add-on's
 * server listens at its own daemon's gateway.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { SLIPWAY_BIN } from '../support/cli.js';
import { freePort } from '../support/free-port.js';
import { cliJson, postgresUriOf, sql } from '../support/addon-cli.js';
import { checkoutExample, createApp, getThroughRouter, pushAndWait, registerSshKey } from '../support/deploy.js';

let first: TestDaemon;
let host: string;
let bridge: string;

before(async () => {
  first = await startDaemon();
  bridge = `slipway${first.subnet.split('.')[1]}`;
  const { gitEnv } = await registerSshKey(first);
  const dir = checkoutExample('node-hello');
  const appId = await createApp(first, dir, 'hello');
  host = `${appId}.localhost`;
  const deployed = await pushAndWait(first, dir, appId, gitEnv);
  assert.equal(deployed.state, 'OK', deployed.push);
});

after(async () => {
  await first?.stop();
});

test('a second daemon on the subnet of a running one refuses to start, names the owner and the --subnet to use, and changes nothing', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'slipway-second-'));
  try {
    const [api, ssh, router] = [await freePort(), await freePort(), await freePort()];
    const second = spawn(
      process.execPath,
      [
        SLIPWAY_BIN,
        'server',
        '--data-dir',
        dataDir,
        '--api-port',
        String(api),
        '--ssh-port',
        String(ssh),
        '--router-port',
        String(router),
        '--subnet',
        first.subnet,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    second.stdout.on('data', (d) => (output += d));
    second.stderr.on('data', (d) => (output += d));
    const code = await new Promise<number | null>((resolve) => second.once('exit', resolve));
    assert.notEqual(code, 0, output);
    const escaped = first.subnet.replaceAll('.', '\\.').replace('/', '\\/');
    assert.match(
      output,
      new RegExp(
        `Another slipway daemon \\(pid ${first.pid()}, data folder ${first.dataDir}\\) already runs its apps on the subnet ${escaped} \\(bridge ${bridge}\\)`,
      ),
    );
    assert.match(output, /with --subnet \(for example --subnet 10\.\d+\.0\.0\/16\), or stop the other daemon first/);
    assert.doesNotMatch(output, /slipway is ready/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  assert.ok(existsSync(`/sys/class/net/${bridge}`), "the first daemon's bridge is still there");
  const response = await getThroughRouter(first, host);
  assert.equal(response.status, 200, 'the first daemon keeps serving its app');
});

test('a second daemon on its own subnet creates PostgreSQL add-ons too: no port is taken machine-wide', async () => {
  const second = await startDaemon();
  try {
    const uris: string[] = [];
    for (const daemon of [first, second]) {
      await cliJson(daemon, ['addon', 'create', 'postgresql', 'db']);
      const uri = await postgresUriOf(daemon, 'db');
      await sql(uri, 'CREATE TABLE owner (daemon text)');
      await sql(uri, 'INSERT INTO owner VALUES ($1)', [daemon.dataDir]);
      uris.push(uri);
    }
    // Each add-on's server answers at its own daemon's gateway with its own data.
    for (const [i, daemon] of [first, second].entries()) {
      assert.deepEqual(await sql(uris[i]!, 'SELECT daemon FROM owner'), [{ daemon: daemon.dataDir }]);
    }
    assert.notEqual(new URL(uris[0]!).hostname, new URL(uris[1]!).hostname, 'each at its own gateway');
  } finally {
    await second.stop();
  }
});

test('with its bridge gone, the router answers its own 502 or 503 page, never a bare 403 from beyond the machine', async () => {
  const instanceAddress = first.subnet.replace(/0\.0\/16$/, '0.2');
  execFileSync('ip', ['link', 'delete', 'dev', bridge]);
  assert.match(execFileSync('ip', ['route', 'show', first.subnet], { encoding: 'utf8' }), /^unreachable /m);
  assert.throws(
    () => execFileSync('ip', ['route', 'get', instanceAddress], { stdio: 'pipe' }),
    /No route to host|unreachable/,
    'instance addresses stay on this machine',
  );
  const response = await getThroughRouter(first, host);
  assert.ok(response.status === 502 || response.status === 503, `status ${response.status}: ${response.body}`);
  assert.match(response.body, /<h1>50[23] - /, "the router's own page");
});
