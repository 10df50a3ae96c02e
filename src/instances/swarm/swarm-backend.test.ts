/**
 * What the swarm backend does beyond the contract (test/contracts/instance-backend.test.ts):
 * workers as services of their own, images in the registry and their removal with the release.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import http from 'node:http';
import { makeTestSwarmBackend, swarmBackendMissing, TEST_REGISTRY } from '../../../test/support/swarm-backend.js';
import { contractSpec, setContractSandbox, waitFor, writeContractRelease, CONTRACT_NODE } from '../../../test/contracts/instance-backend.contract.js';
import type { SwarmBackend } from './swarm-backend.js';
import { DockerApi } from './docker-api.js';

const missing = await swarmBackendMissing();
const docker = new DockerApi();

function registryTags(repository: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    http
      .get(`http://${TEST_REGISTRY}/v2/${repository}/tags/list`, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve(res.statusCode === 200 ? ((JSON.parse(body) as { tags: string[] | null }).tags ?? []) : []));
      })
      .on('error', reject);
  });
}

describe('SwarmBackend specifics', { skip: missing ? `swarm: ${missing}` : false }, () => {
  let backend: SwarmBackend;
  let cleanup: () => Promise<void>;

  before(async () => {
    const made = await makeTestSwarmBackend({ owner: 'swspecific', subnet: '172.27.0.0/16' });
    setContractSandbox(made.sandbox);
    ({ backend, cleanup } = made);
  });

  after(async () => {
    await cleanup?.();
  });

  test('a worker runs as a service of its own, its lines marked, and stops with its instance', async () => {
    const release = writeContractRelease({ 'server.cjs': "require('node:http').createServer((q, s) => s.end('ok')).listen(8080);" });
    try {
      const s = contractSpec(release, {
        appId: 'swarm-worker-app',
        deploymentId: 'worker-deployment',
        script: 'server.cjs',
        workers: [{ name: 'worker', command: [CONTRACT_NODE, '-e', "console.log('working as ' + process.getuid()); setInterval(() => {}, 1000)"], restart: 'always', restartDelayMs: 1000 }],
      });
      const instance = await backend.start(s.spec);
      await waitFor('the worker line', () => s.logs.some((l) => /^\[worker\] working as [1-9]\d*$/.test(l.line)), 30_000);
      const services = () =>
        docker.json<Array<{ Spec: { Labels: Record<string, string> } }>>({ path: '/services', query: { filters: JSON.stringify({ label: ['slipway.app=swarm-worker-app'] }) }, what: 'list services' });
      assert.deepEqual((await services()).map((x) => x.Spec.Labels['slipway.role']).sort(), ['instance', 'worker']);
      await instance.stop(2000);
      assert.deepEqual(await services(), []);
    } finally {
      rmSync(release, { recursive: true, force: true });
    }
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
    const left = await docker.json<unknown[]>({ path: '/images/json', query: { filters: JSON.stringify({ label: ['slipway.app=swarm-prune-app'] }) }, what: 'list images' });
    assert.deepEqual(left, []);
  });
});
