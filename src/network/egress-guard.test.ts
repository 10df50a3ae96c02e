import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, get } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { EgressGuard, EgressRefusedError } from './egress-guard.js';

const policy = { allow: [], sandboxSubnets: ['10.77.0.0/16'], ownPorts: [{ port: 4040, what: 'API' }] };

test('a refusal names the range and the flag that opens it', () => {
  const guard = new EgressGuard(policy);
  assert.equal(
    guard.refusal('192.168.233.7', 80),
    '192.168.233.7 is a private address; the operator can allow it with --egress-allow 192.168.233.7/32',
  );
  assert.match(
    guard.refusal('169.254.169.254', 80)!,
    /link-local address \(cloud metadata services answer there\); .*--egress-allow 169\.254\.169\.254\/32/,
  );
  assert.match(guard.refusal('::ffff:169.254.169.254', 80)!, /^169\.254\.169\.254 is a link-local/);
  assert.match(guard.refusal('fd00::5', 80)!, /unique local .*--egress-allow fd00::5\/128/);
  assert.match(guard.refusal('127.0.0.1', 9000)!, /loopback/);
  assert.match(guard.refusal('10.77.3.4', 80)!, /sandboxes' subnet/);
  assert.equal(guard.refusal('8.8.8.8', 4040), undefined, 'port 4040 elsewhere is someone else’s');
});

test('the operator opens ranges, never the sandboxes nor slipway’s own ports', () => {
  const guard = new EgressGuard({ ...policy, allow: ['10.0.0.0/8', '127.0.0.0/8', '::1/128', '169.254.77.0/24'] });
  assert.equal(guard.refusal('10.1.2.3', 80), undefined);
  assert.equal(guard.refusal('127.0.0.1', 9000), undefined);
  assert.equal(guard.refusal('::1', 9000), undefined);
  assert.equal(guard.refusal('::ffff:169.254.77.77', 80), undefined);
  assert.match(guard.refusal('169.254.169.254', 80)!, /link-local/, 'only the range allowed is open');
  assert.match(guard.refusal('10.77.0.1', 5432)!, /sandboxes' subnet/);
  assert.match(guard.refusal('127.0.0.1', 4040)!, /slipway's own API/);
  assert.match(guard.refusal('::1', 4040)!, /slipway's own API/);
  guard.addOwnPort(2222, 'git server');
  assert.match(guard.refusal('127.0.0.1', 2222)!, /slipway's own git server/);
});

test('a name is refused when any address it resolves to is', async () => {
  const guard = new EgressGuard({ ...policy, allow: ['127.0.0.0/8'] });
  // `localhost` gives ::1 too on most machines; one refused address refuses the name.
  const both = await guard.refusalOfHost('localhost', 80);
  const open = new EgressGuard({ ...policy, allow: ['127.0.0.0/8', '::1/128'] });
  assert.equal(await open.refusalOfHost('localhost', 80), undefined);
  if (both !== undefined) assert.match(both, /^localhost resolves to ::1: ::1 is a loopback address/);
  assert.match((await new EgressGuard(policy).refusalOfHost('localhost', 80))!, /^localhost resolves to .* loopback/);
  assert.match((await guard.refusalOfHost('name.invalid', 80))!, /does not resolve/);
});

test('connections through the guard reach an allowed receiver and are refused otherwise, by name or address', async (t) => {
  const server = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const port = (server.address() as AddressInfo).port;
  const fetchVia = (guard: EgressGuard, host: string) =>
    new Promise<string>((resolve, reject) => {
      const agent = guard.httpAgent();
      get({ host, port, path: '/', agent, family: 4 }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve(body));
      }).on('error', reject);
    });
  const closed = new EgressGuard(policy);
  await assert.rejects(
    fetchVia(closed, '127.0.0.1'),
    (e: Error) => e instanceof EgressRefusedError && /loopback.*--egress-allow 127\.0\.0\.1\/32/.test(e.message),
  );
  await assert.rejects(fetchVia(closed, 'localhost'), /localhost resolves to .* loopback/);
  const open = new EgressGuard({ ...policy, allow: ['127.0.0.0/8', '::1/128'] });
  assert.equal(await fetchVia(open, '127.0.0.1'), 'ok', 'positive control: the same request, allowed');
  assert.equal(await fetchVia(open, 'localhost'), 'ok');
  const own = new EgressGuard({ ...policy, allow: ['127.0.0.0/8'], ownPorts: [{ port, what: 'API' }] });
  await assert.rejects(fetchVia(own, '127.0.0.1'), /slipway's own API/);

  // Plain sockets: a name goes through the lookup, an address through the check before connecting.
  const socketVia = (guard: EgressGuard, host: string) =>
    new Promise<void>((resolve, reject) => {
      let options: ReturnType<EgressGuard['connectOptions']>;
      try {
        options = guard.connectOptions(host, port);
      } catch (error) {
        return reject(error);
      }
      const s = connect({ ...options, family: 4 }, () => {
        s.destroy();
        resolve();
      });
      s.on('error', reject);
    });
  assert.throws(() => closed.connectOptions('127.0.0.1', port), /loopback/);
  await assert.rejects(socketVia(closed, 'localhost'), /loopback/);
  await socketVia(open, 'localhost');
});
