import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PlatformMetrics } from './platform-metrics.js';

/** `host:port` or `[v6]:port` of `--metrics-listen`. */
export function parseListenAddress(flag: string, value: string): { host: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9a-zA-Z.-]+)):(\d{1,5})$/.exec(value.trim());
  const port = match ? Number(match[3]) : NaN;
  if (!match || port < 0 || port > 65535) {
    throw new Error(`${flag} must be an address and a port such as 127.0.0.1:9464 or [::1]:9464, not ${JSON.stringify(value)}.`);
  }
  return { host: match[1] ?? match[2]!, port };
}

/**
 * Serves `GET /metrics` without a token, for a Prometheus that cannot hold one: it is meant
 * for an address only the monitoring network reaches (the API's `/metrics` asks for an
 * administrator's token instead). Nothing else is answered.
 */
export async function startMetricsServer(metrics: PlatformMetrics, host: string, port: number): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Only /metrics is served here.\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('GET /metrics\n');
      return;
    }
    metrics.text().then(
      (text) => res.writeHead(200, { 'content-type': metrics.contentType }).end(req.method === 'HEAD' ? undefined : text),
      (error: Error) =>
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`Could not collect the metrics: ${error.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { server, url: `http://${shown}:${address.port}/metrics` };
}
