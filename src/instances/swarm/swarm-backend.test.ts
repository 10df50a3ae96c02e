/**
 * What the swarm backend does beyond the contract (test/contracts/instance-backend.test.ts):
 * workers as services of their own, images in the registry and their removal with the release.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import {
  freeSwarmSubnet,
  makeTestSwarmBackend,
  registryGet,
  registryGetPlain,
  swarmBackendMissing,
  TEST_REGISTRY,
} from '../../../test/support/swarm-backend.js';
import http from 'node:http';
import { RegistryAccess, dockerCaFile } from './registry.js';
import {
  contractSpec,
  setContractSandbox,
  writeContractRelease,
  CONTRACT_NODE,
} from '../../../test/contracts/instance-backend.contract.js';
import type { SwarmBackend } from './swarm-backend.js';
import { DockerApi } from './docker-api.js';
import { waitUntil } from '../../../test/support/wait.js';

const missing = await swarmBackendMissing();
const docker = new DockerApi();

async function registryTags(repository: string): Promise<string[]> {
  const { status, body } = await registryGet(`/v2/${repository}/tags/list`, { credential: true });
  return status === 200 ? ((JSON.parse(body) as { tags: string[] | null }).tags ?? []) : [];
}

describe('SwarmBackend specifics', { skip: missing ? `swarm: ${missing}` : false }, () => {
  let backend: SwarmBackend;
  let cleanup: () => Promise<void>;

  before(async () => {
    const made = await makeTestSwarmBackend({ owner: 'swspecific', subnet: await freeSwarmSubnet() });
    setContractSandbox(made.sandbox);
    ({ backend, cleanup } = made);
  });

  after(async () => {
    await cleanup?.();
  });

  test("the workers of a release's instances are the replicas of one service, their lines marked, each stopped with its instance", async () => {
    const release = writeContractRelease({ 'server.cjs': "require('node:http').createServer((q, s) => s.end('ok')).listen(8080);" });
    try {
      const s = contractSpec(release, {
        appId: 'swarm-worker-app',
        deploymentId: 'worker-deployment',
        script: 'server.cjs',
        workers: [
          {
            name: 'worker',
            command: [CONTRACT_NODE, '-e', "console.log('working as ' + process.getuid()); setInterval(() => {}, 1000)"],
            restart: 'always',
            restartDelayMs: 1000,
          },
        ],
      });
      const secondId = `${s.spec.instanceId}-2`;
      const second = { logs: [] as Array<{ stream: string; line: string }> };
      const instance = await backend.start(s.spec);
      // Everything shared but the identity: the same release's services.
      const other = await backend.start({
        ...s.spec,
        instanceId: secondId,
        env: { ...s.spec.env, INSTANCE_ID: secondId },
        onLog: (stream, line) => second.logs.push({ stream, line }),
      });
      await waitUntil('the worker line', () => s.logs.some((l) => /^\[worker\] working as [1-9]\d*$/.test(l.line)), 30_000);
      await waitUntil('the second worker line', () => second.logs.some((l) => /^\[worker\] working as [1-9]\d*$/.test(l.line)), 30_000);
      const services = () =>
        docker.json<Array<{ Spec: { Labels: Record<string, string>; Mode: { Replicated: { Replicas: number } } } }>>({
          path: '/services',
          query: { filters: JSON.stringify({ label: ['slipway.app=swarm-worker-app'] }) },
          what: 'list services',
        });
      const replicas = async () =>
        (await services()).map((x) => `${x.Spec.Labels['slipway.role']} ${x.Spec.Mode.Replicated.Replicas}`).sort();
      assert.deepEqual(await replicas(), ['instance 2', 'worker 2']);
      await instance.stop(2000);
      assert.deepEqual(await replicas(), ['instance 1', 'worker 1']);
      assert.ok(!second.logs.some((l) => /^worker .* exited/.test(l.line)), 'the other instance keeps its worker');
      await other.stop(2000);
      assert.deepEqual(await services(), []);
    } finally {
      rmSync(release, { recursive: true, force: true });
    }
  });

  test("a release's instances are replicas of one service: each its own identity, one stopped leaves the others serving, a restarted task runs before-start again", async () => {
    const release = writeContractRelease({
      'server.cjs': `require('node:http').createServer((q, s) => {
  if (q.url === '/crash') process.exit(1);
  s.end(JSON.stringify({ instance: process.env.INSTANCE_ID, number: process.env.INSTANCE_NUMBER }));
}).listen(8080);`,
    });
    const specs = [0, 1, 2].map((n) => {
      const s = contractSpec(release, {
        appId: 'swarm-replica-app',
        deploymentId: 'replica-deployment',
        script: 'server.cjs',
        instanceId: `replica-${n}`,
        instanceNumber: n,
      });
      s.spec.beforeStart = [[CONTRACT_NODE, '-e', 'console.log("before start of " + process.env.INSTANCE_ID)']];
      s.spec.env = { PATH: '/usr/bin:/bin', HOME: release, INSTANCE_ID: `replica-${n}`, INSTANCE_NUMBER: String(n) };
      return s;
    });
    const services = () =>
      docker.json<Array<{ ID: string; Spec: { Mode: { Replicated: { Replicas: number } } } }>>({
        path: '/services',
        query: { filters: JSON.stringify({ label: ['slipway.app=swarm-replica-app'] }) },
        what: 'list services',
      });
    const get = (address: string, path = '/') =>
      new Promise<string>((resolve, reject) =>
        http
          .get({ host: address, port: 8080, path, agent: false, timeout: 2000 }, (res) => {
            let b = '';
            res.on('data', (c) => (b += c));
            res.on('end', () => resolve(b));
          })
          .on('error', reject),
      );
    const answer = async (i: { address: string }) => JSON.parse(await waitUntil('an answer', () => get(i.address), 10_000)) as unknown;
    const instances = await Promise.all(specs.map((s) => backend.start(s.spec)));
    try {
      const [service, ...others] = await services();
      assert.equal(others.length, 0, 'one service for the release');
      assert.equal(service!.Spec.Mode.Replicated.Replicas, 3);
      for (const [n, i] of instances.entries()) assert.deepEqual(await answer(i), { instance: `replica-${n}`, number: String(n) });
      await instances[0]!.stop(2000);
      assert.equal((await services())[0]!.Spec.Mode.Replicated.Replicas, 2);
      for (const [n, i] of instances.entries())
        if (n > 0) assert.deepEqual(await answer(i), { instance: `replica-${n}`, number: String(n) });
      assert.equal(instances[1]!.state(), 'running');
      assert.equal(instances[1]!.restarts(), 0, 'the stop of another replica is not a crash of this one');
      await get(instances[1]!.address, '/crash').catch(() => undefined);
      const hooks = () => specs[1]!.logs.filter((l) => l.line === 'before start of replica-1').length;
      await waitUntil('before-start again in the restarted task', () => hooks() === 2, 30_000);
      await waitUntil(
        'the restarted task to run',
        () => instances[1]!.state() === 'running' && specs[1]!.logs.some((l) => /^running again/.test(l.line)),
        30_000,
      );
      assert.equal(instances[1]!.restarts(), 1);
      assert.deepEqual(await answer(instances[1]!), { instance: 'replica-1', number: '1' });
      assert.ok(!specs[2]!.logs.some((l) => l.line.includes('replica-1')), "a replica's lines reach its own log only");
    } finally {
      await Promise.all(instances.map((i) => i.stop(1000)));
      rmSync(release, { recursive: true, force: true });
    }
    assert.deepEqual(await services(), []);
  });

  test('the registry serves TLS from the CA setup made, refuses anonymous requests and plain HTTP, and a wrong password is said', async () => {
    assert.equal((await registryGet('/v2/', { credential: false })).status, 401, 'anonymous');
    assert.equal((await registryGet('/v2/', { credential: true })).status, 200, 'with the credential');
    const plain = await registryGetPlain('/v2/');
    assert.equal(plain.status, 400, 'plain HTTP');
    assert.match(plain.body, /HTTPS/);
    // Its certificate is of the set-up's own CA, which nothing trusts unless told to.
    await assert.rejects(registryGet('/v2/', { credential: true, ca: false }), /certificate/);
    const wrong = new RegistryAccess({
      address: TEST_REGISTRY,
      user: 'slipway',
      password: 'not-the-password',
      ca: readFileSync(dockerCaFile(TEST_REGISTRY)),
    });
    await assert.rejects(wrong.check(), /refused user "slipway" with the password given \(HTTP 401\)/);
  });

  test('the release image is in the registry until its release folder is gone', async () => {
    const release = writeContractRelease({ 'server.cjs': "require('node:http').createServer((q, s) => s.end('ok')).listen(8080);" });
    const s = contractSpec(release, { appId: 'swarm-prune-app', deploymentId: 'prune-deployment', script: 'server.cjs' });
    const instance = await backend.start(s.spec);
    await instance.stop(1000);
    assert.deepEqual(await registryTags('swspecific/swarm-prune-app'), ['prune-deployment']);
    rmSync(release, { recursive: true, force: true });
    // Any daemon's backend may prune it first (they prune after each build): the outcome counts.
    await backend.images.pruneApp('swarm-prune-app');
    assert.deepEqual(await registryTags('swspecific/swarm-prune-app'), []);
    // Only this release's image: another run's, whose folder still exists, is rightly kept.
    const left = await docker.json<unknown[]>({
      path: '/images/json',
      query: { filters: JSON.stringify({ label: ['slipway.app=swarm-prune-app', `slipway.release-dir=${release}`] }) },
      what: 'list images',
    });
    assert.deepEqual(left, []);
  });
});
