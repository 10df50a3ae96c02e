import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkDrainUrl, parseDrainType } from './drain-target.js';
import { octetCounted, syslogMessage } from './syslog-format.js';
import { makeSender } from './drain-senders.js';
import { EgressGuard } from '../network/egress-guard.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const ownPorts = [
  { port: 4040, what: 'API' },
  { port: 8000, what: 'router' },
];
const forbidden = new EgressGuard({ allow: ['127.0.0.0/8', '::1/128'], sandboxSubnets: ['10.77.0.0/16'], ownPorts });

test('drain URLs: accepted for their type, refused with the reason otherwise', async () => {
  assert.equal((await checkDrainUrl('HTTP', 'http://127.0.0.1:9999/in', forbidden)).port, '9999');
  assert.equal((await checkDrainUrl('TCPSyslog', 'tcp://127.0.0.1:6514', forbidden)).protocol, 'tcp:');
  const refused = async (type: Parameters<typeof checkDrainUrl>[0], url: string, reason: RegExp) =>
    assert.rejects(checkDrainUrl(type, url, forbidden), reason);
  await refused('HTTP', 'ftp://logs.example.com/', /starts with http:\/\/ or https:\/\//);
  await refused('HTTP', 'file:///etc/passwd', /not file:/);
  await refused('UDPSyslog', 'tcp://127.0.0.1:514', /starts with udp:/);
  await refused('HTTP', 'http://127.0.0.1:4040/v1/apps', /slipway's own API/);
  await refused('HTTP', 'http://localhost:8000/', /slipway's own router/);
  await refused('TCPSyslog', 'tcp://10.77.3.4:514', /sandboxes' subnet/);
  await refused('HTTP', 'http://169.254.169.254/', /link-local .*--egress-allow 169\.254\.169\.254\/32/);
  await refused('UDPSyslog', 'udp://[::ffff:192.168.1.9]:514', /192\.168\.1\.9 is a private address; the operator can allow it/);
  await refused('HTTP', 'http://100.64.0.1/', /carrier-grade NAT/);
  await refused('HTTP', 'http://user:pw@127.0.0.1:9999/', /credentials/);
  await refused('HTTP', 'not a url', /not a URL/);
  assert.equal(parseDrainType('httP'), 'HTTP');
  assert.throws(() => parseDrainType('DatadogHTTP'), /one of TCPSyslog, UDPSyslog, HTTP, ElasticSearch/);
});

test('syslog messages follow RFC 5424 with the app and instance in the structured data', () => {
  const message = syslogMessage(
    { time: '2026-01-02T03:04:05.678Z', stream: 'err', line: 'boom "x" ] \\', app: 'shop', app_id: 'app_1', instance: 'instance_9' },
    'host1',
  );
  assert.equal(
    message,
    '<11>1 2026-01-02T03:04:05.678Z host1 shop instance_9 err [slipway@32473 app="shop" app_id="app_1" instance="instance_9" stream="err"] boom "x" ] \\',
  );
  assert.equal(octetCounted('héllo'), '6 héllo');
});

test('each connection is checked again: a name or address that now points at slipway is refused', async () => {
  let received = 0;
  const server = createServer((req, res) => {
    received++;
    req.resume();
    req.on('end', () => res.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const record = { time: new Date().toISOString(), stream: 'out', line: 'x', app: 'a', app_id: 'app_1' };
  const credentials = { username: null, password: null };
  try {
    // Positive control: allowed while the port is not slipway's.
    const open = new EgressGuard({ allow: ['127.0.0.0/8', '::1/128'], sandboxSubnets: [], ownPorts: [] });
    for (const host of ['localhost', '127.0.0.1']) {
      const sender = makeSender('HTTP', new URL(`http://${host}:${port}/in`), credentials, open);
      await sender.send([record]);
      sender.close();
    }
    assert.equal(received, 2);
    // The same receiver's port became one of slipway's (a restart with other ports).
    const taken = new EgressGuard({ allow: ['127.0.0.0/8', '::1/128'], sandboxSubnets: [], ownPorts: [{ port, what: 'API' }] });
    for (const [type, url] of [
      ['HTTP', `http://localhost:${port}/in`],
      ['HTTP', `http://127.0.0.1:${port}/in`],
      ['TCPSyslog', `tcp://localhost:${port}`],
      ['UDPSyslog', `udp://localhost:${port}`],
      ['UDPSyslog', `udp://127.0.0.1:${port}`],
    ] as const) {
      const sender = makeSender(type, new URL(url), credentials, taken);
      await assert.rejects(sender.send([record]), /slipway's own API/, url);
      sender.close();
    }
    // Without the operator's allowance, loopback is refused at each connection as well.
    const closed = new EgressGuard({ allow: [], sandboxSubnets: [], ownPorts: [] });
    for (const [type, url] of [
      ['HTTP', `http://localhost:${port}/in`],
      ['HTTP', `http://127.0.0.1:${port}/in`],
      ['TCPSyslog', `tcp://127.0.0.1:${port}`],
    ] as const) {
      const sender = makeSender(type, new URL(url), credentials, closed);
      await assert.rejects(sender.send([record]), /loopback address; the operator can allow it with --egress-allow/, url);
      sender.close();
    }
    assert.equal(received, 2);
  } finally {
    server.close();
  }
});
