import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { makeSender } from './drain-senders.js';
import { EgressGuard } from '../network/egress-guard.js';

const record = (line: string) => ({ time: new Date().toISOString(), stream: 'out', line, app: 'shop', app_id: 'app_1' });

test('TCP syslog: what a receiver took but never read before dying is sent again on the next connection', async () => {
  const connections: Socket[] = [];
  const read: string[] = [];
  const server = createServer((socket) => {
    connections.push(socket);
    // The first connection's receiver takes nothing in and dies; the next one reads.
    if (connections.length === 1) socket.pause();
    else socket.on('data', (d) => read.push(d.toString('utf8')));
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const sender = makeSender(
    'TCPSyslog',
    new URL(`tcp://127.0.0.1:${port}`),
    { username: null, password: null },
    new EgressGuard({ allow: ['127.0.0.0/8', '::1/128'], sandboxSubnets: [], ownPorts: [] }),
  );
  try {
    await sender.send([record('first batch')]);
    assert.equal(connections.length, 1);
    // Resolved: the kernel took it. The receiver dies without having read it.
    const closed = new Promise((resolve) => connections[0]!.once('close', resolve));
    connections[0]!.destroy();
    await closed;
    // The sender notices the broken connection (or its write fails and the batch is retried).
    await sender.send([record('second batch')]).catch(() => sender.send([record('second batch')]));
    const deadline = Date.now() + 5_000;
    while (!read.join('').includes('second batch') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const text = read.join('');
    assert.match(text, /first batch/, 'the batch the dead receiver never read came again');
    assert.ok(text.indexOf('first batch') < text.indexOf('second batch'), 'in order');
  } finally {
    sender.close();
    server.close();
  }
});
