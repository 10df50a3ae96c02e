import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Store } from '../../src/store/store.js';
import { createApiServer } from '../../src/api/server.js';

/** The real API server on a fresh store and a loopback port, for unit tests of the routes. */
export interface TestApiServer {
  store: Store;
  /** An admin's token. */
  token: string;
  /** Where the API listens, as the CLI's SLIPWAY_URL takes it. */
  url: string;
  request(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  close(): void;
}

export async function startTestApiServer(): Promise<TestApiServer> {
  const store = Store.open(join(mkdtempSync(join(tmpdir(), 'slipway-api-')), 'slipway.db'));
  const user = store.users.create('alice', true);
  const token = store.users.issueToken(user.id, 'test');
  const server = createApiServer({ store, endpoints: { host: 'localhost', sshPort: 2222, routerPort: 8080, domain: 'apps.localhost' } });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    store,
    token,
    url: `http://127.0.0.1:${port}`,
    async request(method, path, body) {
      const response = await fetch(`http://127.0.0.1:${port}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    },
    close() {
      server.close();
      store.close();
    },
  };
}
