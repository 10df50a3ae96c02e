import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { InternalCa } from '../../src/certificates/internal-ca.js';

/**
 * A real ACME server for tests: Pebble, with pebble-challtestsrv as its DNS server answering
 * 127.0.0.1 for every name, so its validation authority fetches HTTP-01 challenges from the
 * port given (slipway's router, or the challenge responder itself).
 */
export interface TestPebble {
  directoryUrl: string;
  /** File of the CA that signed Pebble's own HTTPS certificate (for --acme-directory-ca). */
  directoryCaFile: string;
  directoryCaPem: string;
  /** Pebble's current root, which the certificates it issues chain to. */
  root(): Promise<string>;
  output(): string;
  stop(): Promise<void>;
}

/** Where setup.sh installs Pebble; undefined (with the reason) when it is not there. */
export function pebbleBinaries(): { pebble: string; challtestsrv: string } | { missing: string } {
  let gopath: string;
  try {
    gopath = execFileSync('go', ['env', 'GOPATH'], { encoding: 'utf8' }).trim();
  } catch {
    return { missing: 'Go is not installed, so Pebble is not either (run scripts/setup.sh)' };
  }
  const pebble = join(gopath, 'bin', 'pebble');
  const challtestsrv = join(gopath, 'bin', 'pebble-challtestsrv');
  if (!existsSync(pebble) || !existsSync(challtestsrv))
    return { missing: `Pebble is not installed in ${join(gopath, 'bin')} (run scripts/setup.sh)` };
  return { pebble, challtestsrv };
}

function waitForOutput(child: ChildProcess, pattern: RegExp, collected: () => string, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start:\n${collected()}`)), 20_000);
    const check = () => {
      if (pattern.test(collected())) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code}:\n${collected()}`));
    });
  });
}

export async function startPebble(options: { httpPort: number; validitySeconds: number }): Promise<TestPebble> {
  const binaries = pebbleBinaries();
  if ('missing' in binaries) throw new Error(binaries.missing);
  const dir = mkdtempSync(join(tmpdir(), 'slipway-pebble-'));
  const ca = await InternalCa.openOrCreate(join(dir, 'ca'), 'pebble test');
  const tls = await ca.issue(['localhost']);
  writeFileSync(join(dir, 'cert.pem'), tls.certificatePem);
  writeFileSync(join(dir, 'key.pem'), tls.privateKeyPem);
  const [acmePort, managementPort, dnsPort, dnsManagementPort, tlsPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  writeFileSync(
    join(dir, 'pebble.json'),
    JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${acmePort}`,
        managementListenAddress: `127.0.0.1:${managementPort}`,
        certificate: join(dir, 'cert.pem'),
        privateKey: join(dir, 'key.pem'),
        httpPort: options.httpPort,
        tlsPort,
        ocspResponderURL: '',
        externalAccountBindingRequired: false,
        // Orders for these names are refused: the tests see how a failed order is reported.
        domainBlocklist: ['refused.slipway-acme.dev'],
        profiles: { default: { description: 'short-lived, for renewal tests', validityPeriod: options.validitySeconds } },
      },
    }),
  );
  let log = '';
  const collect = (child: ChildProcess) => {
    child.stdout!.on('data', (d) => (log += d));
    child.stderr!.on('data', (d) => (log += d));
  };
  const dns = spawn(
    binaries.challtestsrv,
    [
      '-defaultIPv4',
      '127.0.0.1',
      '-defaultIPv6',
      '',
      '-dns01',
      `127.0.0.1:${dnsPort}`,
      '-management',
      `127.0.0.1:${dnsManagementPort}`,
      '-http01',
      '',
      '-https01',
      '',
      '-tlsalpn01',
      '',
      '-doh',
      '',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  collect(dns);
  await waitForOutput(dns, /Starting challenge servers|dnsone|DNS/i, () => log, 'pebble-challtestsrv');
  // No random sleeps before validation; the nonce rejections stay (acme-client retries them).
  const pebble = spawn(binaries.pebble, ['-config', join(dir, 'pebble.json'), '-dnsserver', `127.0.0.1:${dnsPort}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_AUTHZREUSE: '0' },
  });
  collect(pebble);
  await waitForOutput(pebble, /Listening on/, () => log, 'pebble');
  const caPem = `${tls.certificatePem.split(/(?<=-----END CERTIFICATE-----)/)[1]!.trim()}\n`;
  writeFileSync(join(dir, 'directory-ca.pem'), caPem);
  const stopChild = (child: ChildProcess) =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.removeAllListeners('exit');
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return {
    directoryUrl: `https://localhost:${acmePort}/dir`,
    directoryCaFile: join(dir, 'directory-ca.pem'),
    directoryCaPem: caPem,
    root: () =>
      new Promise((resolve, reject) => {
        const req = request(`https://localhost:${managementPort}/roots/0`, { ca: caPem }, (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve(body));
        });
        req.on('error', reject);
        req.end();
      }),
    output: () => log,
    stop: async () => {
      await Promise.all([stopChild(pebble), stopChild(dns)]);
    },
  };
}
