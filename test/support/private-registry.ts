/**
 * A private npm registry for the tests: a real HTTP server on a host of the test's own
 * (test/support/remote-host.ts, as a private registry is elsewhere on the network) serving
 * @slipway-test/secret-greeting (packed from examples/node-private-registry-package with the
 * real npm) only to requests carrying the right token or basic credentials, like a private
 * registry does. Everything else gets 401 with a message naming this registry, so a test can
 * see the registry's answer in a deployment log.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXAMPLES } from './deploy.js';
import { startRemoteHost } from './remote-host.js';

export const PRIVATE_PACKAGE = '@slipway-test/secret-greeting';
export const REFUSAL = 'slipway test registry: these credentials are not accepted';

export interface PrivateRegistry {
  /** `http://<remote host>:<port>`: what CC_NPM_REGISTRY is set to (plain http, so with the scheme). */
  url: string;
  /** The registry's host, for configuration that names hosts (Yarn's unsafeHttpWhitelist). */
  host: string;
  /** One line per request: `<method> <url> authorized|bad-credentials|anonymous`. */
  seen: string[];
  close(): Promise<void>;
}

export async function startPrivateRegistry(credentials: { token: string; basic: string }): Promise<PrivateRegistry> {
  const packDir = mkdtempSync(join(tmpdir(), 'slipway-registry-'));
  const packed = execFileSync(
    'npm',
    ['pack', '--pack-destination', packDir, join(EXAMPLES, 'node-private-registry-package/secret-greeting')],
    {
      encoding: 'utf8',
      env: { ...process.env, npm_config_update_notifier: 'false' },
    },
  )
    .trim()
    .split('\n')
    .pop()!;
  const tarball = readFileSync(join(packDir, packed));
  rmSync(packDir, { recursive: true, force: true });
  const tarballPath = `/${PRIVATE_PACKAGE}/-/secret-greeting-1.0.0.tgz`;
  const seen: string[] = [];
  const server = createServer((req, res) => {
    const auth = req.headers.authorization ?? '';
    const allowed = auth === `Bearer ${credentials.token}` || auth === `Basic ${Buffer.from(credentials.basic).toString('base64')}`;
    seen.push(`${req.method} ${req.url} ${allowed ? 'authorized' : auth ? 'bad-credentials' : 'anonymous'}`);
    if (!allowed) {
      // No www-authenticate header: npm then prints the registry's own message with the 401
      // (with one it prints a generic "token seems to be invalid" instead).
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: REFUSAL }));
      return;
    }
    const url = decodeURIComponent(req.url ?? '');
    const base = `http://${remote.address}:${(server.address() as { port: number }).port}`;
    if (url === `/${PRIVATE_PACKAGE}`) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          name: PRIVATE_PACKAGE,
          'dist-tags': { latest: '1.0.0' },
          // Yarn 4 holds back versions without a publish time (its minimal-age gate).
          time: { created: '2020-01-01T00:00:00.000Z', modified: '2020-01-01T00:00:00.000Z', '1.0.0': '2020-01-01T00:00:00.000Z' },
          versions: {
            '1.0.0': {
              name: PRIVATE_PACKAGE,
              version: '1.0.0',
              main: 'index.js',
              dist: {
                tarball: `${base}${tarballPath}`,
                shasum: createHash('sha1').update(tarball).digest('hex'),
                integrity: `sha512-${createHash('sha512').update(tarball).digest('base64')}`,
              },
            },
          },
        }),
      );
      return;
    }
    if (url === tarballPath) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(tarball);
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'not found' }));
  });
  const remote = startRemoteHost();
  await new Promise<void>((resolve) => server.listen(0, remote.hostSideAddress, resolve));
  await remote.expose((server.address() as { port: number }).port);
  return {
    url: `http://${remote.address}:${(server.address() as { port: number }).port}`,
    host: remote.address,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        remote.close();
      }),
  };
}
