/**
 * Steady load through a test daemon's router with the clients users have: keep-alive HTTP/1.1,
 * HTTP/2 over TLS, a new connection per request, and keep-alive POSTs with a body. Every
 * failure is kept with its kind; `stop()` ends the loops and says what each kind saw, and the
 * longest time any kind went without a successful answer.
 */
import { Agent, request } from 'node:http';
import { connect as http2Connect } from 'node:http2';
import { setTimeout as sleep } from 'node:timers/promises';
import { after } from 'node:test';
import type { TestDaemon } from './daemon.js';

export type LoadKind = 'keepAlive' | 'http2' | 'fresh' | 'post';

interface Answer {
  status: number;
  body: string;
}

function http1(daemon: TestDaemon, host: string, agent: Agent | false, method: 'GET' | 'POST'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = method === 'POST' ? JSON.stringify({ order: Math.random() }) : undefined;
    const req = request(
      {
        host: '127.0.0.1',
        port: daemon.routerPort,
        path: '/',
        method,
        agent,
        timeout: 15_000,
        headers: {
          host,
          ...(agent === false ? { connection: 'close' } : {}),
          ...(body ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

export interface LoadResult {
  /** The first 50 failures, with their kind. */
  failures: string[];
  failureCount: number;
  counts: Record<LoadKind, number>;
  /** The longest time, in ms, between two successful answers of the same kind. */
  longestGapMs: number;
  /** The `release` field of the answers seen (node-hello's facts). */
  releases: Set<string>;
}

/**
 * Loads still running when a file's tests end (an assertion failed before stop()): stopped
 * then, or their loops would keep the file's process alive. Only under the test runner (the
 * benches use this module too, and stop what they start).
 */
const unstopped = new Set<() => Promise<unknown>>();
if (process.env.NODE_TEST_CONTEXT !== undefined) {
  after(async () => {
    for (const stop of unstopped) await stop();
  });
}

export function steadyLoad(daemon: TestDaemon, host: string): { stop(): Promise<LoadResult> } {
  let running = true;
  const failures: string[] = [];
  const counts: Record<LoadKind, number> = { keepAlive: 0, http2: 0, fresh: 0, post: 0 };
  const lastSuccess: Record<LoadKind, number> = { keepAlive: Date.now(), http2: Date.now(), fresh: Date.now(), post: Date.now() };
  let longestGapMs = 0;
  let failureCount = 0;
  const releases = new Set<string>();
  const agent = new Agent({ keepAlive: true, maxSockets: 6 });
  const postAgent = new Agent({ keepAlive: true, maxSockets: 2 });
  const session = http2Connect(`https://127.0.0.1:${daemon.httpsPort}`, { servername: host, rejectUnauthorized: false });
  session.on('error', (error) => void fail(`http2 session: ${error.message}`));
  const h2 = (): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const stream = session.request({ ':path': '/', ':authority': host });
      let body = '';
      let status = 0;
      stream.setEncoding('utf8');
      stream.setTimeout(15_000, () => stream.close());
      stream.on('response', (h) => (status = Number(h[':status'])));
      stream.on('data', (d: string) => (body += d));
      stream.on('end', () => resolve({ status, body }));
      stream.on('error', reject);
    });
  const fail = async (what: string) => {
    failureCount++;
    if (failures.length < 50) failures.push(what);
    // A refused connection fails at once: no spinning while nothing answers.
    await sleep(20);
  };
  const loop = async (kind: LoadKind, once: () => Promise<Answer>) => {
    while (running) {
      try {
        const answer = await once();
        if (answer.status !== 200) {
          await fail(`${kind}: status ${answer.status} ${answer.body.slice(0, 100)}`);
          continue;
        }
        counts[kind]++;
        const now = Date.now();
        longestGapMs = Math.max(longestGapMs, now - lastSuccess[kind]);
        lastSuccess[kind] = now;
        const release = (JSON.parse(answer.body) as { release?: string }).release;
        if (release) releases.add(release);
      } catch (error) {
        await fail(`${kind}: ${(error as Error).message}`);
      }
    }
  };
  const loops = [
    ...Array.from({ length: 4 }, () => loop('keepAlive', () => http1(daemon, host, agent, 'GET'))),
    ...Array.from({ length: 2 }, () => loop('http2', h2)),
    loop('fresh', () => http1(daemon, host, false, 'GET')),
    loop('post', () => http1(daemon, host, postAgent, 'POST')),
  ];
  const stop = async (): Promise<LoadResult> => {
    unstopped.delete(stop);
    running = false;
    await Promise.all(loops);
    agent.destroy();
    postAgent.destroy();
    session.close();
    return { failures, failureCount, counts, longestGapMs, releases };
  };
  unstopped.add(stop);
  return { stop };
}
