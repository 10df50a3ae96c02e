import { networkInterfaces } from 'node:os';
import { isIPv4 } from 'node:net';

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
 * warn and apps would find nothing at the address they were given.
 */
export function assertAddressAssigned(address: string): void {
  if (address.startsWith('127.')) return;
  const assigned = Object.values(networkInterfaces())
    .flat()
    .some((info) => info?.address === address);
  if (!assigned) {
    throw new Error(
      `The gateway address ${address} is not assigned to any interface on this machine, so add-on ` +
        `servers cannot listen on it. Bring up the instance bridge before starting add-ons ` +
        `(see "ip -br addr").`,
    );
  }
}

/** The /16 around an IPv4 address, e.g. 10.77.0.1 -> 10.77.0.0/16: the default app subnet. */
export function defaultSubnet(gatewayAddress: string): string {
  assertIPv4(gatewayAddress);
  const [a, b] = gatewayAddress.split('.');
  return `${a}.${b}.0.0/16`;
}
