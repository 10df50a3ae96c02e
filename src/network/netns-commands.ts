/**
 * argv arrays for every `ip` call the host's bridge makes. Pure functions, so the
 * exact commands are tested as data; every name in them went through netns-names.ts first.
 */
import type { HostTools } from '../executor/host-tools.js';
import { INNER_INTERFACE, type InstanceNetNames } from './netns-names.js';

export interface InstanceNetwork extends InstanceNetNames {
  /** e.g. 10.77.0.6 */
  address: string;
  prefixLength: number;
  gateway: string;
  bridge: string;
}

export function bridgeExistsArgv(t: HostTools, bridge: string): string[] {
  return [t.ip, '-o', 'link', 'show', 'dev', bridge];
}

export function createBridgeArgv(t: HostTools, bridge: string): string[] {
  return [t.ip, 'link', 'add', 'name', bridge, 'type', 'bridge'];
}

/** `replace` so that running init twice is harmless. */
export function bridgeAddressArgv(t: HostTools, bridge: string, gateway: string, prefixLength: number): string[] {
  return [t.ip, 'address', 'replace', `${gateway}/${prefixLength}`, 'dev', bridge];
}

/**
 * A route of last resort for the whole subnet: while the bridge exists its own route wins; if
 * the bridge is gone (deleted by hand, or by a daemon of another slipway), packets for instance
 * addresses fail here with "no route to host" (the router's 502 page) instead of leaving the
 * machine by the default route and getting an answer from whatever is out there.
 */
export function subnetFallbackRouteArgv(t: HostTools, subnet: string, verb: 'replace' | 'delete'): string[] {
  return [t.ip, 'route', verb, 'unreachable', subnet, 'metric', String(FALLBACK_ROUTE_METRIC)];
}

export const FALLBACK_ROUTE_METRIC = 4_294_967_295;

export function linkUpArgv(t: HostTools, dev: string): string[] {
  return [t.ip, 'link', 'set', 'dev', dev, 'up'];
}

export function deleteLinkArgv(t: HostTools, dev: string): string[] {
  return [t.ip, 'link', 'delete', 'dev', dev];
}

export function listNamespacesArgv(t: HostTools): string[] {
  return [t.ip, 'netns', 'list'];
}

export function listLinksArgv(t: HostTools): string[] {
  return [t.ip, '-o', 'link', 'show'];
}

/** Every IPv4 address on the host, to refuse a subnet that overlaps one already in use. */
export function listAddressesArgv(t: HostTools): string[] {
  return [t.ip, '-o', '-4', 'address', 'show'];
}

export function namespacePidsArgv(t: HostTools, namespace: string): string[] {
  return [t.ip, 'netns', 'pids', namespace];
}

export function deleteNamespaceArgv(t: HostTools, namespace: string): string[] {
  return [t.ip, 'netns', 'delete', namespace];
}

/** Commands that build one instance's network, in order. */
export function setupInstanceNetworkArgvs(t: HostTools, n: InstanceNetwork): string[][] {
  return [
    [t.ip, 'netns', 'add', n.namespace],
    // The inner end is created directly inside the namespace: no moment where it exists on the host.
    [t.ip, 'link', 'add', 'name', n.hostVeth, 'type', 'veth', 'peer', 'name', INNER_INTERFACE, 'netns', n.namespace],
    [t.ip, 'link', 'set', 'dev', n.hostVeth, 'master', n.bridge],
    // Isolated bridge ports reach the host but not each other: no sandbox talks to another
    // at layer 2, where the firewall would not see it.
    [t.ip, 'link', 'set', 'dev', n.hostVeth, 'type', 'bridge_slave', 'isolated', 'on'],
    [t.ip, 'link', 'set', 'dev', n.hostVeth, 'up'],
    [t.ip, '-n', n.namespace, 'link', 'set', 'dev', 'lo', 'up'],
    [t.ip, '-n', n.namespace, 'address', 'add', `${n.address}/${n.prefixLength}`, 'dev', INNER_INTERFACE],
    [t.ip, '-n', n.namespace, 'link', 'set', 'dev', INNER_INTERFACE, 'up'],
    [t.ip, '-n', n.namespace, 'route', 'add', 'default', 'via', n.gateway, 'dev', INNER_INTERFACE],
  ];
}

/**
 * Commands that undo setupInstanceNetworkArgvs. Deleting the host end removes the pair;
 * deleting the namespace would too, but only once no process holds it, so both are explicit.
 */
export function teardownInstanceNetworkArgvs(t: HostTools, n: InstanceNetNames): string[][] {
  return [deleteLinkArgv(t, n.hostVeth), deleteNamespaceArgv(t, n.namespace)];
}
