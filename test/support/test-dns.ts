import { spawn, type ChildProcess } from 'node:child_process';
import { pebbleBinaries } from './pebble.js';
import { freePort } from './free-port.js';

export interface TestDns {
  /** `127.0.0.1:<port>`: what `--dns-resolver` is given. */
  address: string;
  /** Serves a TXT record (replacing the one of the same name). */
  setTxt(name: string, value: string): Promise<void>;
  /** Answers A queries for `name` with these addresses from now on (instead of 127.0.0.1). */
  setA(name: string, addresses: string[]): Promise<void>;
  output(): string;
  stop(): Promise<void>;
}

/**
 * A real DNS server on loopback for the tests: pebble-challtestsrv (installed by
 * scripts/setup.sh), which answers A queries with 127.0.0.1 and serves the TXT records the test
 * sets over its management API.
 */
export async function startTestDns(): Promise<TestDns> {
  const binaries = pebbleBinaries();
  if ('missing' in binaries) throw new Error(binaries.missing);
  const [dnsPort, managementPort] = [await freePort(), await freePort()];
  const child: ChildProcess = spawn(
    binaries.challtestsrv,
    [
      '-defaultIPv4',
      '127.0.0.1',
      '-defaultIPv6',
      '',
      '-dns01',
      `127.0.0.1:${dnsPort}`,
      '-management',
      `127.0.0.1:${managementPort}`,
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
  let log = '';
  child.stdout!.on('data', (d) => (log += d));
  child.stderr!.on('data', (d) => (log += d));
  const deadline = Date.now() + 15_000;
  while (!/Starting challenge servers|dnsone|DNS/i.test(log)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`pebble-challtestsrv did not start:\n${log}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const fqdn = (name: string) => (name.endsWith('.') ? name : `${name}.`);
  const manage = async (path: string, body: object) => {
    const response = await fetch(`http://127.0.0.1:${managementPort}/${path}`, { method: 'POST', body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`${path} ${JSON.stringify(body)}: ${response.status} ${await response.text()}`);
  };
  return {
    address: `127.0.0.1:${dnsPort}`,
    async setTxt(name, value) {
      await manage('set-txt', { host: fqdn(name), value });
    },
    async setA(name, addresses) {
      await manage('clear-a', { host: fqdn(name) });
      await manage('add-a', { host: fqdn(name), addresses });
    },
    output: () => log,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
