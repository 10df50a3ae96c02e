/**
 * slipway's nftables table, as text built by pure functions (tested as data). One table of its
 * own per daemon (`inet slipway<n>`, named after the subnet like the bridge); nothing here
 * touches any other table. What it allows:
 *
 * | from \ to          | outside world | host (daemon ports, loopback services) | add-on servers       | router port | other sandboxes |
 * |--------------------|---------------|----------------------------------------|----------------------|-------------|-----------------|
 * | a build            | yes (NAT)     | no                                     | those of its app     | no          | no              |
 * | an instance        | yes (NAT)     | no                                     | those of its app     | yes         | no              |
 * | the outside world  | -             | -                                      | -                    | -           | replies only    |
 *
 * Two sandboxes on the bridge cannot talk at layer 2 either: their bridge ports are isolated
 * (netns-commands.ts), so nothing between them goes around this table.
 */

export interface FirewallConfig {
  /** e.g. `slipway77`. */
  table: string;
  /** The bridge every sandbox's veth joins. */
  bridge: string;
  /** The sandboxes' network, e.g. `10.77.0.0/16`. */
  subnet: string;
  /** The host's address on the bridge. */
  gateway: string;
  /** Ports of the gateway instances may reach (the router when it listens there). */
  routerPorts: number[];
  /**
   * Whether slipway turned IPv4 forwarding on: then forwarded traffic that does not come from
   * or go to a slipway bridge is dropped, so the host does not become a router for anything else.
   */
  forwardingEnabledBySlipway: boolean;
}

const TABLE = /^[a-z][a-z0-9_]{0,30}$/;
const IFNAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,14}$/;
const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const CIDR = /^(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})\/(\d{1,2})$/;

export function checkIpv4(address: string): string {
  const m = IPV4.exec(address);
  if (!m || m.slice(1).some((p) => Number(p) > 255)) throw new Error(`Not an IPv4 address: ${JSON.stringify(address)}.`);
  return address;
}

function checkPort(port: number): number {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`Not a port: ${port}.`);
  return port;
}

function checkConfig(c: FirewallConfig): FirewallConfig {
  if (!TABLE.test(c.table)) throw new Error(`Invalid nftables table name ${JSON.stringify(c.table)}.`);
  if (!IFNAME.test(c.bridge)) throw new Error(`Invalid bridge name ${JSON.stringify(c.bridge)}.`);
  const m = CIDR.exec(c.subnet);
  if (!m || Number(m[2]) > 32) throw new Error(`Invalid subnet ${JSON.stringify(c.subnet)}.`);
  checkIpv4(m[1]!);
  checkIpv4(c.gateway);
  c.routerPorts.forEach(checkPort);
  return c;
}

/** The whole table. Applied with `nft -f -` after deleting a table of the same name. */
export function firewallRuleset(config: FirewallConfig): string {
  const c = checkConfig(config);
  const br = JSON.stringify(c.bridge);
  const routerPorts = c.routerPorts.length ? [`    iifname ${br} ip saddr @instances ip daddr ${c.gateway} tcp dport { ${c.routerPorts.join(', ')} } accept`] : [];
  // Every slipway bridge is named slipway<n>: traffic of another daemon's sandboxes passes too.
  const forwardGuard = c.forwardingEnabledBySlipway ? ['    iifname != "slipway*" oifname != "slipway*" drop'] : [];
  return [
    `table inet ${c.table} {`,
    '  set builds {',
    '    type ipv4_addr',
    '  }',
    '  set instances {',
    '    type ipv4_addr',
    '  }',
    '  set addon_access {',
    '    type ipv4_addr . inet_service',
    '  }',
    '  chain input {',
    '    type filter hook input priority filter; policy accept;',
    `    iifname ${br} ct state established,related accept`,
    `    iifname ${br} ip saddr . tcp dport @addon_access accept`,
    ...routerPorts,
    `    iifname ${br} drop`,
    '  }',
    '  chain forward {',
    '    type filter hook forward priority filter; policy accept;',
    `    iifname ${br} oifname ${br} drop`,
    `    ip daddr ${c.subnet} ct state established,related accept`,
    `    ip daddr ${c.subnet} drop`,
    `    iifname ${br} ip saddr ${c.subnet} accept`,
    ...forwardGuard,
    '  }',
    '  chain postrouting {',
    '    type nat hook postrouting priority srcnat; policy accept;',
    // Only what sandboxes send out: the host's own traffic from the gateway address stays as it is.
    `    iifname ${br} ip saddr ${c.subnet} oifname != ${br} masquerade`,
    '  }',
    '}',
    '',
  ].join('\n');
}

export type SandboxKind = 'build' | 'instance';

/** `nft` argv adding (or deleting) a sandbox address to its set. */
export function sandboxElementArgv(nft: string, table: string, kind: SandboxKind, address: string, op: 'add' | 'delete'): string[] {
  if (!TABLE.test(table)) throw new Error(`Invalid nftables table name ${JSON.stringify(table)}.`);
  return [nft, op, 'element', 'inet', table, kind === 'build' ? 'builds' : 'instances', `{ ${checkIpv4(address)} }`];
}

export interface AddonEndpoint {
  address: string;
  port: number;
}

/** The `nft -f -` script that replaces the allowed add-on endpoints with `endpoints`. */
export function addonAccessScript(table: string, endpoints: AddonEndpoint[]): string {
  if (!TABLE.test(table)) throw new Error(`Invalid nftables table name ${JSON.stringify(table)}.`);
  const elements = [...new Set(endpoints.map((e) => `${checkIpv4(e.address)} . ${checkPort(e.port)}`))].sort();
  return [`flush set inet ${table} addon_access`, ...(elements.length ? [`add element inet ${table} addon_access { ${elements.join(', ')} }`] : []), ''].join('\n');
}
