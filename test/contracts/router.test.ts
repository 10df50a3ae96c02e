/**
 * The router contract against every engine: the fake (always) and HAProxy (when its Debian
 * binary is installed; skipped saying so otherwise). nginx is the bench's reference
 * (bench/nginx/), not an engine of the daemon: its own tests are beside it.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeRouter } from '../support/fakes/fake-router.js';
import { HaproxyRouter } from '../../src/router/haproxy/haproxy-router.js';
import { runRouterContract } from './router.contract.js';

const missingBinary = (path: string, pkg: string) => (existsSync(path) ? undefined : `${path} is missing (Debian package ${pkg})`);

async function workDir(name: string): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `slipway-router-contract-${name}-`));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

runRouterContract({
  name: 'FakeRouter',
  async make() {
    const router = new FakeRouter();
    return { router, port: () => router.port, cleanup: async () => undefined };
  },
});

runRouterContract({
  name: 'HaproxyRouter',
  missing: missingBinary('/usr/sbin/haproxy', 'haproxy'),
  async make(port) {
    const { dir, cleanup } = await workDir('haproxy');
    const router = new HaproxyRouter({ listenHost: '127.0.0.1', port, workDir: dir, drainTimeoutSeconds: 5, initialSlots: 8 });
    return { router, port: () => port, cleanup };
  },
});
