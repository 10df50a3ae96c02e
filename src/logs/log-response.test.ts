import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { newId } from '../core/ids.js';
import { LogHub } from './log-hub.js';
import { logRequest, streamLog } from './log-response.js';

function serve(logs: LogHub, key: string, live: () => boolean) {
  const server = createServer((req, res) => {
    const query = new URL(req.url!, 'http://x').searchParams;
    const lines = query.get('lines');
    const request = logRequest({ follow: query.get('follow') ?? undefined, lines: lines === null ? undefined : Number(lines) });
    streamLog(res, logs, key, request, live, () => ({ state: 'OK' })).catch((e) => res.destroy(e));
  });
  return new Promise<{ get(query: string): Promise<IncomingMessage>; close(): void }>((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        get: (query) =>
          new Promise((ok, fail) =>
            request({ host: '127.0.0.1', port, path: `/?${query}` }, ok)
              .on('error', fail)
              .end(),
          ),
        close: () => server.close(),
      });
    }),
  );
}

async function lines(res: IncomingMessage): Promise<Array<Record<string, unknown>>> {
  let text = '';
  for await (const chunk of res) text += chunk;
  return text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

// The router refuses a wrong value of lines or since before this (src/api/openapi.test.ts).
test('the query: follow, lines and since, the time told back in UTC', () => {
  assert.deepEqual(logRequest({ follow: '1', lines: 20, since: '2024-05-01T14:00:00+02:00' }), {
    follow: true,
    lines: 20,
    since: '2024-05-01T12:00:00.000Z',
  });
  assert.deepEqual(logRequest({}), { follow: false });
  assert.deepEqual(logRequest({ follow: '0' }), { follow: false });
});

test('the last lines, then live ones, then the end record', async () => {
  const logs = new LogHub(join(mkdtempSync(join(tmpdir(), 'slipway-log-response-')), 'logs'));
  const key = newId('deployment');
  for (let n = 0; n < 100; n++) logs.append(key, 'out', `stored ${n}`);
  const server = await serve(logs, key, () => true);
  try {
    const tail = await lines(await server.get('lines=3'));
    assert.deepEqual(
      tail.map((e) => e.line ?? e),
      ['stored 97', 'stored 98', 'stored 99', { end: true, state: 'OK' }],
    );

    const res = await server.get('lines=1&follow=1');
    const received = lines(res);
    await new Promise((r) => setTimeout(r, 50));
    logs.append(key, 'system', 'live 1');
    logs.append(key, 'system', 'live 2');
    logs.finish(key);
    assert.deepEqual(
      (await received).map((e) => e.line ?? e),
      ['stored 99', 'live 1', 'live 2', { end: true, state: 'OK' }],
    );
  } finally {
    server.close();
  }
});

test('a reader slower than the log skips lines, with a notice counting them, rather than the daemon holding them for it', async () => {
  // The disk queue is made large enough that the hub itself drops nothing here.
  const logs = new LogHub(join(mkdtempSync(join(tmpdir(), 'slipway-log-response-')), 'logs'), { maxQueuedChars: 64 * 1024 * 1024 });
  const key = newId('app');
  const server = await serve(logs, key, () => true);
  try {
    const res = await server.get('lines=0&follow=1');
    res.pause(); // reads nothing for now
    const line = 'w'.repeat(1000);
    for (let burst = 0; burst < 40; burst++) {
      for (let i = 0; i < 1000; i++) logs.append(key, 'out', line);
      await new Promise((r) => setImmediate(r));
    }
    const received = lines(res);
    res.resume();
    await new Promise((r) => setTimeout(r, 100));
    logs.finish(key);
    const entries = await received;
    const skipped = entries.filter((e) => typeof e.line === 'string' && e.line.startsWith('slipway skipped'));
    assert.ok(skipped.length > 0, 'a notice says lines were skipped');
    const count = skipped.reduce((sum, e) => sum + Number(/skipped (\d+) lines/.exec(e.line as string)![1]), 0);
    const delivered = entries.filter((e) => e.line === line).length;
    assert.equal(delivered + count, 40_000, 'delivered + skipped = appended');
    assert.ok(delivered < 40_000);
  } finally {
    server.close();
  }
});
