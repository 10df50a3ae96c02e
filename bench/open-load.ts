/**
 * An open-loop load through a daemon's router: requests sent at a steady rate whatever the
 * answers, on one keep-alive agent, so a held or slow request does not slow the sending of the
 * others. Each request's latency and whether it answered 200 is kept for the bench to read.
 */
import { Agent, request } from 'node:http';
import type { TestDaemon } from '../test/support/daemon.js';

export interface Sample {
  sentAt: number;
  ms: number;
  ok: boolean;
}

/** What the n-th request is: its method, path and body (a body makes it carry its length). */
export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  headers?: Record<string, string>;
}

function once(daemon: TestDaemon, host: string, agent: Agent, timeoutMs: number, r: LoadRequest): Promise<Sample> {
  const sentAt = Date.now();
  const length: Record<string, string> = r.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(r.body)) };
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: daemon.routerPort,
        path: r.path,
        method: r.method,
        agent,
        timeout: timeoutMs,
        headers: { host, ...r.headers, ...length },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ sentAt, ms: Date.now() - sentAt, ok: res.statusCode === 200 }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', () => resolve({ sentAt, ms: Date.now() - sentAt, ok: false }));
    req.end(r.body);
  });
}

/** Sends `ratePerSecond` requests a second to `host`, the n-th as `requestAt(n, sentAt)` says, until stopped. */
export function openLoad(
  daemon: TestDaemon,
  host: string,
  o: { ratePerSecond: number; timeoutMs: number; requestAt(n: number, sentAt: number): LoadRequest },
): { stop(): Promise<Sample[]> } {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const pending: Array<Promise<Sample>> = [];
  let n = 0;
  const timer = setInterval(
    () => pending.push(once(daemon, host, agent, o.timeoutMs, o.requestAt(n++, Date.now()))),
    1000 / o.ratePerSecond,
  );
  return {
    async stop() {
      clearInterval(timer);
      const samples = await Promise.all(pending);
      agent.destroy();
      return samples;
    },
  };
}
