/**
 * HTTPS on the default domain, as a new user meets it: `slipway server` with no --domain serves
 * <app_id>.localhost, and its start message says clients trust the internal CA for it. A client
 * that trusts only that CA (curl --cacert, Node with `ca:`; never -k) must get the app, which
 * needs the router to take the platform certificate: a one-label domain gets no wildcard there.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { connect, type PeerCertificate } from 'node:tls';
import { promisify } from 'node:util';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, createApp, pushAndWait, registerSshKey } from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';

let daemon: TestDaemon;
let appId: string;
let host: string;
let caFile: string;

/** The certificate the router presents for `servername`, whoever signed it. */
function servedCertificate(servername: string): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: daemon.httpsPort, servername, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate());
      socket.end();
    });
    socket.on('error', reject);
  });
}

before(async () => {
  daemon = await startDaemon();
  const printed = /the internal CA's certificate is (\S+)/.exec(daemon.output());
  assert.ok(printed, `slipway server prints where its CA certificate is:\n${daemon.output()}`);
  caFile = printed[1]!;
  const { gitEnv } = await registerSshKey(daemon);
  const dir = checkoutExample('node-hello');
  appId = await createApp(daemon, dir, 'default-domain');
  host = `${appId}.localhost`;
  const deployed = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(deployed.state, 'OK', deployed.push);
});

after(async () => {
  await daemon?.stop();
});

test('<app_id>.localhost answers over HTTPS to clients that trust only the internal CA', async () => {
  // The router takes certificates once the app's route is applied: wait for the one naming the app.
  const served = await waitUntil(
    `the router to present a certificate naming ${host}`,
    async () => {
      const cert = await servedCertificate(host);
      return cert.subjectaltname?.split(', ').includes(`DNS:${host}`) ? cert : undefined;
    },
    30_000,
  ).catch(async (error) => {
    const cert = await servedCertificate(host).catch(() => undefined);
    throw new Error(`${(error as Error).message}; served: ${cert?.subject?.CN} (${cert?.subjectaltname})\n${daemon.output()}`);
  });
  const ca = new X509Certificate(readFileSync(caFile));
  assert.ok(new X509Certificate(served.raw).checkIssued(ca), `served by ${served.issuer.CN}, not the internal CA`);

  const curl = await promisify(execFile)('curl', [
    '--silent',
    '--show-error',
    '--fail',
    '--cacert',
    caFile,
    '--resolve',
    `${host}:${daemon.httpsPort}:127.0.0.1`,
    `https://${host}:${daemon.httpsPort}/facts`,
  ]);
  assert.equal(JSON.parse(curl.stdout).appId, appId);

  const status = await new Promise<number>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: daemon.httpsPort,
        servername: host,
        headers: { host },
        path: '/facts',
        ca: readFileSync(caFile),
        agent: false,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end();
  });
  assert.equal(status, 200);
  assert.doesNotMatch(daemon.output(), /The router did not take the certificates/);
});
