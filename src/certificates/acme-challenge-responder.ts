import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Upstream } from '../router/router.js';

const PREFIX = '/.well-known/acme-challenge/';

/**
 * Answers ACME HTTP-01 challenges on a loopback port: the router sends every
 * `/.well-known/acme-challenge/*` request here, whatever its host. Only tokens of orders in
 * progress are known; anything else is a 404.
 */
export class AcmeChallengeResponder {
  private readonly tokens = new Map<string, string>();
  private server: Server | undefined;
  upstream: Upstream = { address: '127.0.0.1', port: 0 };

  async start(): Promise<Upstream> {
    const server = createServer((req, res) => {
      const path = (req.url ?? '').split('?')[0]!;
      const answer = req.method === 'GET' && path.startsWith(PREFIX) ? this.tokens.get(path.slice(PREFIX.length)) : undefined;
      res.writeHead(answer ? 200 : 404, { 'content-type': 'text/plain', 'cache-control': 'no-store' });
      res.end(answer ?? 'No such ACME challenge.\n');
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.upstream = { address: '127.0.0.1', port: (server.address() as AddressInfo).port };
    return this.upstream;
  }

  set(token: string, keyAuthorization: string): void {
    this.tokens.set(token, keyAuthorization);
  }

  remove(token: string): void {
    this.tokens.delete(token);
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
