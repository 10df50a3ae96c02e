/**
 * The behaviour every Router engine must show over plain HTTP, as a reusable node:test suite run
 * by test/contracts/router.test.ts against each engine (the fake one included): unknown hosts
 * get 404, an app without instances 503, a routed host reaches its upstreams, a new table
 * serves new requests once apply() resolved, and a request in flight on a removed upstream
 * finishes. An engine that cannot run here (its binary missing) is skipped saying why.
 * TLS, access records and forwarded headers are engine-specific and tested beside each engine.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HostRoute, Router, RoutingTable, Upstream } from '../../src/router/router.js';
import { freePort } from '../support/free-port.js';

export interface RouterSubject {
  name: string;
  /** Why the engine cannot run on this machine; undefined when it can. */
  missing?: string;
  /** Makes a stopped router listening on 127.0.0.1 at `port` (any free port when the engine picks its own). */
  make(port: number): Promise<{ router: Router; port(): number; cleanup(): Promise<void> }>;
}

interface TestUpstream extends Upstream {
  name: string;
  server: http.Server;
  /** Resolves once a request to /held reached this upstream, which answers it only at releaseHeld(). */
  heldArrived(): Promise<void>;
  releaseHeld(): void;
}

/** An app instance: answers its name; a request to /held waits until the test releases it. */
async function startUpstream(name: string): Promise<TestUpstream> {
  let held: Array<() => void> = [];
  let arrived: () => void = () => undefined;
  let arrival = new Promise<void>((resolve) => (arrived = resolve));
  const server = http.createServer((req, res) => {
    const reply = () => res.end(name);
    if (req.url !== '/held') return reply();
    held.push(reply);
    arrived();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    name,
    address: '127.0.0.1',
    port: (server.address() as AddressInfo).port,
    server,
    heldArrived: () => arrival,
    releaseHeld: () => {
      for (const reply of held) reply();
      held = [];
      arrival = new Promise<void>((resolve) => (arrived = resolve));
    },
  };
}

/** One request on its own connection, with an explicit Host header. */
function get(port: number, host: string, path = '/'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, agent: false, headers: { host }, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
    req.end();
  });
}

const route = (appId: string, ...upstreams: Upstream[]): HostRoute => ({
  appId,
  upstreams: upstreams.map(({ address, port }) => ({ address, port })),
  forceHttps: false,
});

export function runRouterContract(subject: RouterSubject): void {
  describe(`router contract: ${subject.name}`, { skip: subject.missing ? `${subject.name}: ${subject.missing}` : false }, () => {
    let router: Router;
    let port: () => number;
    let cleanup: () => Promise<void>;
    let blue: TestUpstream;
    let green: TestUpstream;

    before(async () => {
      [blue, green] = await Promise.all([startUpstream('blue'), startUpstream('green')]);
      ({ router, port, cleanup } = await subject.make(await freePort()));
      await router.start();
    });

    after(async () => {
      await router?.stop();
      await cleanup?.();
      for (const u of [blue, green]) u?.server.close();
    });

    test('a host reaches its upstream; an app with none gets 503; an unknown host 404', async () => {
      const table: RoutingTable = new Map([
        ['app-a.contract.test', route('app_a', blue)],
        ['app-idle.contract.test', route('app_idle')],
      ]);
      await router.apply(table);
      assert.deepEqual(await get(port(), 'app-a.contract.test'), { status: 200, body: 'blue' });
      assert.equal((await get(port(), 'app-idle.contract.test')).status, 503);
      assert.equal((await get(port(), 'nobody.contract.test')).status, 404);
    });

    test('requests are spread over every upstream of a host', async () => {
      await router.apply(new Map([['app-b.contract.test', route('app_b', blue, green)]]));
      const seen = new Set<string>();
      for (let i = 0; i < 8; i++) seen.add((await get(port(), 'app-b.contract.test')).body);
      assert.deepEqual([...seen].sort(), ['blue', 'green']);
    });

    test('once apply() resolved, new requests follow the new table', async () => {
      await router.apply(new Map([['app-c.contract.test', route('app_c', blue)]]));
      assert.equal((await get(port(), 'app-c.contract.test')).body, 'blue');
      await router.apply(new Map([['app-c.contract.test', route('app_c', green)]]));
      for (let i = 0; i < 4; i++) assert.equal((await get(port(), 'app-c.contract.test')).body, 'green');
    });

    test('a request in flight on a removed upstream finishes (drain)', async () => {
      await router.apply(new Map([['app-d.contract.test', route('app_d', blue)]]));
      const inFlight = get(port(), 'app-d.contract.test', '/held');
      await blue.heldArrived();
      await router.apply(new Map([['app-d.contract.test', route('app_d', green)]]));
      assert.equal((await get(port(), 'app-d.contract.test')).body, 'green', 'new requests go to the new upstream');
      // Only now, the switch done, does the old upstream answer the request it held all along.
      blue.releaseHeld();
      assert.deepEqual(await inFlight, { status: 200, body: 'blue' });
    });
  });
}
