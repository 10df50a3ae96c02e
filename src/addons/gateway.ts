import { runChecked } from '../executor/run-captured.js';
import { isIPv4 } from 'node:net';
import { findHostTools } from '../executor/host-tools.js';

/** Addresses an add-on server listens on: loopback for the host, the gateway for app namespaces. */
export function bindAddresses(gatewayAddress: string): string[] {
  assertIPv4(gatewayAddress);
  return gatewayAddress === '127.0.0.1' ? ['127.0.0.1'] : ['127.0.0.1', gatewayAddress];
}

export function assertIPv4(address: string): void {
  if (!isIPv4(address)) {
    throw new Error(`The gateway address "${address}" is not an IPv4 address (expected e.g. 10.77.0.1).`);
  }
}

/**
 * A server cannot bind an address no interface holds; without this check PostgreSQL would only
 * warn and apps would find nothing at the address they were given. The kernel's own list
 * (`ip -j addr`) is asked, not os.networkInterfaces(): that one leaves out interfaces without
 * carrier, which is what the instance bridge is whenever no sandbox is plugged into it (after a
 * kill -9 of the daemon, before the first instance), although binding its address works.
 */
export async function assertAddressAssigned(address: string): Promise<void> {
  if (address.startsWith('127.')) return;
  if (!(await kernelAddresses()).includes(address)) {
    throw new Error(
      `The gateway address ${address} is not assigned to any interface on this machine, so add-on ` +
        `servers cannot listen on it. Bring up the instance bridge before starting add-ons ` +
        `(see "ip -br addr").`,
    );
  }
}

/** Every IPv4 address the kernel has on an interface, whatever the interface's state. */
export async function kernelAddresses(): Promise<string[]> {
  const { ip } = await findHostTools();
  const { stdout } = await runChecked([ip, '-j', '-4', 'address', 'show'], {
    timeoutMs: 10_000,
    env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
  });
  return parseIpAddressJson(stdout);
}

/** The `local` addresses of `ip -j addr` output. */
export function parseIpAddressJson(json: string): string[] {
  const links = JSON.parse(json) as Array<{ addr_info?: Array<{ family?: string; local?: string }> }>;
  return links.flatMap((link) =>
    (link.addr_info ?? []).filter((a) => a.family === 'inet' && typeof a.local === 'string').map((a) => a.local!),
  );
}

/** The /16 around an IPv4 address, e.g. 10.77.0.1 -> 10.77.0.0/16: the default app subnet. */
export function defaultSubnet(gatewayAddress: string): string {
  assertIPv4(gatewayAddress);
  const [a, b] = gatewayAddress.split('.');
  return `${a}.${b}.0.0/16`;
}
