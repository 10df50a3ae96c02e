/**
 * A bounded load through a test daemon's router, on loopback: `concurrency` keep-alive loops
 * GETting `path`, each pausing `pauseMs` between requests, for at most `maxMs`. Unlike
 * steady-load.ts (as many requests as the router takes, to catch any failure during a switch),
 * its pace is chosen: a CPU-burning request load that saturates an app's instances, or a gentle
 * one that keeps requests flowing while leaving them idle. Every failure is kept; each answer's
 * `instance` field (which instance gave it) is noted with when it was first seen.
 */
import { Agent, request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { after } from 'node:test';
import type { TestDaemon } from './daemon.js';

export interface PacedLoadResult {
  ok: number;
  failureCount: number;
  /** The first 20 failures. */
  failures: string[];
  /** When each instance (the answers' `instance` field) first answered, in ms since the epoch. */
  firstAnswerOf: Map<string, number>;
}

export interface PacedLoad {
  /** What it saw so far. */
  result(): PacedLoadResult;
  /** Ends the loops (requests in flight finish) and says what it saw. */
  stop(): Promise<PacedLoadResult>;
}

const unstopped = new Set<() => Promise<unknown>>();
if (process.env.NODE_TEST_CONTEXT !== undefined) {
  after(async () => {
    for (const stop of unstopped) await stop();
  });
}

export function pacedLoad(
  daemon: TestDaemon,
  host: string,
  options: { path: string; concurrency: number; pauseMs: number; maxMs: number },
): PacedLoad {
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const deadline = Date.now() + options.maxMs;
  let running = true;
  const seen: PacedLoadResult = { ok: 0, failureCount: 0, failures: [], firstAnswerOf: new Map() };
  const fail = (what: string) => {
    seen.failureCount++;
    if (seen.failures.length < 20) seen.failures.push(what);
  };
  const once = () =>
    new Promise<void>((resolve) => {
      const failed = (error: Error) => {
        fail(error.message);
        resolve();
      };
      const req = request(
        { host: '127.0.0.1', port: daemon.routerPort, path: options.path, agent, timeout: 15_000, headers: { host } },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (body += d));
          res.on('error', failed);
          res.on('end', () => {
            if (res.statusCode !== 200) fail(`status ${res.statusCode}: ${body.slice(0, 100)}`);
            else {
              seen.ok++;
              const instance = String((JSON.parse(body) as { instance?: unknown }).instance);
              if (!seen.firstAnswerOf.has(instance)) seen.firstAnswerOf.set(instance, Date.now());
            }
            resolve();
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', failed);
      req.end();
    });
  const loop = async () => {
    while (running && Date.now() < deadline) {
      await once();
      if (options.pauseMs > 0) await sleep(options.pauseMs);
    }
  };
  const loops = Array.from({ length: options.concurrency }, loop);
  const snapshot = (): PacedLoadResult => ({ ...seen, failures: [...seen.failures], firstAnswerOf: new Map(seen.firstAnswerOf) });
  const stop = async () => {
    unstopped.delete(stop);
    running = false;
    await Promise.all(loops);
    agent.destroy();
    return snapshot();
  };
  unstopped.add(stop);
  return { result: snapshot, stop };
}
