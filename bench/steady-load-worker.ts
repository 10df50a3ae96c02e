/**
 * An open-loop load on its own thread: `rate` requests a second through the router to one
 * host on keep-alive connections, each latency timed from the moment its request was due (a
 * slow answer does not slow the sending, so a stall counts in full for every request it held
 * up). On a thread of its own, the timer that sends each request never waits behind what the
 * bench's main thread does meanwhile (the daemon's output, the followed build log, its garbage
 * collection): what is measured is the router and the app, not the bench.
 *
 * The parent sends 'stop'; the worker answers with the latencies (ms) and the failure count.
 */
import { Agent, request } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

export interface LoadOrder {
  port: number;
  host: string;
  rate: number;
}

export interface LoadOutcome {
  latenciesMs: number[];
  failures: number;
  seconds: number;
}

const { port, host, rate } = workerData as LoadOrder;
const agent = new Agent({ keepAlive: true, maxSockets: 64 });
const latencies: number[] = [];
let failures = 0;
let stopped = false;
parentPort!.once('message', () => (stopped = true));

const started = performance.now();
const pending = new Set<Promise<void>>();
const interval = 1000 / rate;
for (let n = 0; !stopped; n++) {
  const due = started + n * interval;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  const answered = new Promise<void>((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/', headers: { host }, agent, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => {
        if (res.statusCode === 200) latencies.push(performance.now() - due);
        else failures++;
        resolve();
      });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => {
      failures++;
      resolve();
    });
    req.end();
  });
  pending.add(answered);
  void answered.finally(() => pending.delete(answered));
}
const seconds = (performance.now() - started) / 1000;
await Promise.all(pending);
agent.destroy();
parentPort!.postMessage({ latenciesMs: latencies, failures, seconds } satisfies LoadOutcome);
