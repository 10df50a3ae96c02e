/**
 * Asks the running nginx which configuration generation it serves, over the unix socket
 * that only the router's own work directory exposes. Every probe is a new connection, so
 * the answer comes from whichever worker accepts new connections right now.
 */
import { request } from 'node:http';

export function readGeneration(socketPath: string, timeoutMs = 1000): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/generation', agent: false, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve(res.statusCode === 200 && /^\d+$/.test(body) ? Number(body) : undefined));
      res.on('error', () => resolve(undefined));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}
