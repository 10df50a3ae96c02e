/**
 * docs/security.md, Liveness: a health-check answer's body is read up to a bound, against a
 * real HTTP server on loopback that streams a body without end (as fast as the connection
 * takes it) or drips one slowly. The check ends with the status, having read about the bound,
 * and the server sees its connection closed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { get, HEALTH_CHECK_BODY_LIMIT } from './health-check.js';
import { probeLiveness } from './liveness-probe.js';

interface Stream {
  port: number;
  /** Bytes the server managed to write, per request, once each connection closed. */
  written: Promise<number>[];
  close(): Promise<void>;
}

/** A server answering `status` with an endless body: `chunk` bytes at a time, each after `everyMs`. */
async function endlessBody(status: number, chunk: number, everyMs: number): Promise<Stream> {
  const written: Promise<number>[] = [];
  const server = createServer((_req, res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'text/plain' });
    const block = Buffer.alloc(chunk, 'x');
    let total = 0;
    written.push(
      new Promise((resolve) => {
        res.on('close', () => resolve(total));
        const write = () => {
          if (res.destroyed) return;
          total += block.length;
          if (everyMs === 0 && res.write(block)) setImmediate(write);
          else if (everyMs === 0) res.once('drain', write);
          else {
            res.write(block);
            setTimeout(write, everyMs);
          }
        };
        write();
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as AddressInfo).port,
    written,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

test('an endless body is cut after the bound: the status stands and the connection is closed', { timeout: 10_000 }, async () => {
  const server = await endlessBody(200, 16 * 1024, 0);
  try {
    const started = Date.now();
    const result = await get('127.0.0.1', server.port, '/', 3000);
    assert.deepEqual(result, { path: '/', status: 200 });
    assert.ok(Date.now() - started < 2000, `ended after ${Date.now() - started} ms, not at a timeout`);
    // The server saw its connection closed: it wrote what the bound and the sockets' buffers took, no more.
    const total = await server.written[0]!;
    assert.ok(total > HEALTH_CHECK_BODY_LIMIT, `positive control: the server wrote past the bound (${total} bytes)`);
    assert.ok(total < 64 * 1024 * 1024, `the server stopped writing at ${total} bytes`);
  } finally {
    await server.close();
  }
});

test('a failing status with an endless body fails the liveness check without reading it', { timeout: 10_000 }, async () => {
  const server = await endlessBody(503, 16 * 1024, 0);
  try {
    const failure = await probeLiveness('127.0.0.1', server.port, ['/', '/db'], 3000);
    assert.deepEqual(failure, { path: '/', status: 503 });
    assert.equal(server.written.length, 2, 'both paths were asked');
    await Promise.all(server.written);
  } finally {
    await server.close();
  }
});

test('a body that drips for ever ends the check after the timeout, with its status', { timeout: 10_000 }, async () => {
  const server = await endlessBody(200, 1, 100);
  try {
    const started = Date.now();
    const result = await get('127.0.0.1', server.port, '/', 500);
    const took = Date.now() - started;
    assert.deepEqual(result, { path: '/', status: 200 });
    assert.ok(took >= 400 && took < 2000, `ended after ${took} ms`);
    await server.written[0];
  } finally {
    await server.close();
  }
});

test('a body within the bound is read to its end, as before', async () => {
  const server = createServer((_req, res) => res.end('x'.repeat(1000)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  try {
    const result = await get('127.0.0.1', (server.address() as AddressInfo).port, '/', 3000);
    assert.deepEqual(result, { path: '/', status: 200 });
  } finally {
    server.close();
  }
});
