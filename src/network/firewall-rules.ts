/**
 * slipway's nftables table, as text built by pure functions (tested as data). One table of its
 * own per daemon (`inet slipway<n>`, named after the subnet like the bridge); nothing here
 * names any other table. What it allows is in README.md beside this file.
 *
 * The sets are the only part that changes while the daemon runs: `builds` and `instances` hold
 * the addresses of the sandboxes alive now, `addon_access` the pairs (sandbox address, add-on
 * port) of the add-ons linked to each sandbox's app, `addon_ports` the port of every add-on
 * server on the host, which only root may connect to from the host itself. An address in no set
 * gets nothing.
 */
import type { SandboxKind } from './network-events.js';

export interface FirewallConfig {
  /** e.g. `slipway77`. */
  table: string;
  /** The bridge every sandbox's veth joins, e.g. `slipway77`. */
  bridge: string;
  /** The sandboxes' network, e.g. `10.77.0.0/16`. */
  subnet: string;
  /** The host's address on the bridge, where add-on servers and the router listen. */
  gateway: string;
  /** Ports of the gateway instances may reach (the router). Builds never reach them. */
  routerPorts: number[];
  /**
   * Whether slipway turned IPv4 forwarding on: then forwarded traffic that touches no slipway
   * bridge is dropped, so enabling it does not make the host a router for anything else.
   */
  forwardingEnabledBySlipway: boolean;
  /**
   * Sandboxes of the subnet also live on other machines, routed here (a swarm's other nodes):
   * what they send to the gateway from any interface but the bridge meets the bridge's rules.
   */
  subnetBeyondBridge?: boolean;
  /**
   * What sandboxes may reach beyond the machine besides the public internet: the operator's
   * `--egress-allow` ranges, and the machine's DNS servers (port 53 only), which are often on a
   * private address. Everything in EGRESS_BLOCKED is refused otherwise.
   */
  egress?: { allow: readonly string[]; nameservers: readonly string[] };
}

/**
 * Where a sandbox must never go on its own: link-local (a cloud machine's metadata service and
 * its credentials), the private ranges (the operator's other machines, their Docker APIs and
 * databases), carrier-grade NAT, loopback and "this network". The machine's own addresses are
 * the input chain's business (only the router and linked add-ons answer there).
 */
export const EGRESS_BLOCKED = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.168.0.0/16',
];

/**
 * What the table held for sandboxes that outlive the daemon (instances, their add-on access),
 * carried into the table a new daemon puts in place: they keep their network while it starts.
 */
export interface CarriedElements {
  instances: string[];
  addonAccess: AddonEndpoint[];
  /** The add-on servers' ports: they stay closed to the host's other users while a new daemon starts. */
  addonPorts: number[];
}

/** One address and one add-on port it may reach on the gateway. */
export interface AddonEndpoint {
  address: string;
  port: number;
}

const TABLE = /^[a-z][a-z0-9_]{0,30}$/;
const IFNAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,14}$/;
const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const CIDR = /^(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})\/(\d{1,2})$/;

export function checkIpv4(address: string): string {
  const m = IPV4.exec(address);
  if (!m || m.slice(1).some((p) => Number(p) > 255 || (p.length > 1 && p.startsWith('0')))) {
    throw new Error(`Not an IPv4 address: ${JSON.stringify(address)}; expected four numbers 0-255 such as 10.77.0.6.`);
  }
  return address;
}

function checkPort(port: number): number {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`Not a port: ${port}; expected a whole number from 1 to 65535.`);
  return port;
}

export function checkTable(table: string): string {
  if (!TABLE.test(table))
    throw new Error(
      `Invalid nftables table name ${JSON.stringify(table)}: use lower-case letters, digits and "_", starting with a letter.`,
    );
  return table;
}

/** An IPv4 range such as 192.168.233.0/24 (the address is its network's: nft refuses others). */
export function checkCidr(cidr: string): string {
  const m = CIDR.exec(cidr);
  const bits = Number(m?.[2]);
  if (!m || bits > 32) throw new Error(`Not an IPv4 range: ${JSON.stringify(cidr)}; expected e.g. 192.168.233.0/24.`);
  const n = checkIpv4(m[1]!)
    .split('.')
    .reduce((acc, p) => acc * 256 + Number(p), 0);
  const size = 2 ** (32 - bits);
  if (n % size !== 0) {
    const start = n - (n % size);
    const dotted = [24, 16, 8, 0].map((shift) => Math.floor(start / 2 ** shift) % 256).join('.');
    throw new Error(`${cidr} is not the start of a /${bits} range: use ${dotted}/${bits}.`);
  }
  return cidr;
}

function checkConfig(c: FirewallConfig): FirewallConfig {
  checkTable(c.table);
  if (!IFNAME.test(c.bridge)) throw new Error(`Invalid bridge name ${JSON.stringify(c.bridge)}: use up to 15 letters, digits, "_" or "-".`);
  const m = CIDR.exec(c.subnet);
  if (!m || Number(m[2]) > 32) throw new Error(`Invalid subnet ${JSON.stringify(c.subnet)}; expected e.g. 10.77.0.0/16.`);
  checkIpv4(m[1]!);
  checkIpv4(c.gateway);
  c.routerPorts.forEach(checkPort);
  return c;
}

/**
 * What every slipway bridge's name starts with: `slipway77` -> `slipway`. Several daemons (each
 * with its own subnet and bridge) may share a host; the forwarding guard must let all of them
 * through, or the first daemon's table would cut the others off the world.
 */
export function bridgeFamily(bridge: string): string {
  return bridge.replace(/\d+$/, '');
}

/** The forward chain's rules that keep sandboxes from the ranges of EGRESS_BLOCKED, but for what is allowed. */
function egressRules(br: string, egress: FirewallConfig['egress']): string[] {
  const allow = [...new Set((egress?.allow ?? []).map((cidr) => checkCidr(cidr)))];
  const nameservers = [...new Set((egress?.nameservers ?? []).map(checkIpv4))];
  const fromSandbox = [`ip saddr @builds`, `ip saddr @instances`];
  return [
    ...fromSandbox.flatMap((from) =>
      nameservers.length
        ? [`    iifname ${br} ${from} ip daddr { ${nameservers.join(', ')} } meta l4proto { tcp, udp } th dport 53 accept`]
        : [],
    ),
    ...fromSandbox.flatMap((from) => (allow.length ? [`    iifname ${br} ${from} ip daddr { ${allow.join(', ')} } accept`] : [])),
    `    iifname ${br} ip daddr { ${EGRESS_BLOCKED.join(', ')} } drop`,
  ];
}

/** The whole table, as `nft -f` reads it. */
export function firewallRuleset(
  config: FirewallConfig,
  carried: CarriedElements = { instances: [], addonAccess: [], addonPorts: [] },
): string {
  const c = checkConfig(config);
  const instances = [...new Set(carried.instances.map(checkIpv4))].sort();
  const access = [...new Set(carried.addonAccess.map((e) => `${checkIpv4(e.address)} . ${checkPort(e.port)}`))].sort();
  const ports = portList(carried.addonPorts);
  const elements = (list: string[]) => (list.length ? [`    elements = { ${list.join(', ')} }`] : []);
  const br = JSON.stringify(c.bridge);
  const routerPorts = c.routerPorts.length
    ? [
        `    iifname ${br} ip saddr @instances ip daddr ${c.gateway} tcp dport { ${[...new Set(c.routerPorts)].sort((a, b) => a - b).join(', ')} } accept`,
      ]
    : [];
  // The same as from the bridge, for the subnet's sandboxes on other machines (their traffic
  // comes in on the host's other links); the host's own, from its addresses, comes in on loopback.
  const beyond = `iifname != { ${br}, "lo" } ip saddr ${c.subnet}`;
  const fromBeyondBridge = c.subnetBeyondBridge
    ? [
        `    ${beyond} ct state established,related accept`,
        `    ${beyond} ip daddr ${c.gateway} ip saddr . tcp dport @addon_access accept`,
        ...routerPorts.map((rule) => rule.replace(`iifname ${br}`, beyond)),
        `    ${beyond} drop`,
      ]
    : [];
  const forwardGuard = c.forwardingEnabledBySlipway
    ? [`    iifname != ${JSON.stringify(`${bridgeFamily(c.bridge)}*`)} oifname != ${JSON.stringify(`${bridgeFamily(c.bridge)}*`)} drop`]
    : [];
  return [
    `table inet ${c.table} {`,
    '  set builds {',
    '    type ipv4_addr',
    '  }',
    '  set instances {',
    '    type ipv4_addr',
    ...elements(instances),
    '  }',
    '  set addon_access {',
    '    type ipv4_addr . inet_service',
    ...elements(access),
    '  }',
    '  set addon_ports {',
    '    type inet_service',
    ...elements(ports),
    '  }',
    // What sandboxes may send to the host itself. `iifname` alone (no `ip`) also catches IPv6,
    // link-local included: a sandbox reaches no host port over it.
    '  chain input {',
    '    type filter hook input priority filter; policy accept;',
    `    iifname ${br} ct state established,related accept`,
    `    iifname ${br} ip daddr ${c.gateway} ip saddr . tcp dport @addon_access accept`,
    ...routerPorts,
    `    iifname ${br} drop`,
    ...fromBeyondBridge,
    '  }',
    // What the host routes for sandboxes: out to the world, never to each other, nothing in
    // but replies.
    '  chain forward {',
    '    type filter hook forward priority filter; policy accept;',
    `    iifname ${br} oifname ${br} drop`,
    `    ip daddr ${c.subnet} ct state established,related accept`,
    `    ip daddr ${c.subnet} drop`,
    `    iifname ${br} meta nfproto ipv6 drop`,
    ...egressRules(br, c.egress),
    `    iifname ${br} ip saddr @builds accept`,
    `    iifname ${br} ip saddr @instances accept`,
    `    iifname ${br} drop`,
    ...forwardGuard,
    '  }',
    // What the host's own processes may open to the add-on servers: root only (the daemon:
    // backups, health of the servers), on loopback and the gateway where the servers listen.
    // Another local user, with or without the password, is refused (a reset, at once). Every
    // packet the client sends is matched, not only its first: a connection opened before the
    // port was in the set (a server just started) ends at its next packet. The servers' replies
    // (the reply direction) are never touched.
    '  chain output {',
    '    type filter hook output priority filter; policy accept;',
    `    meta skuid != 0 ip daddr { 127.0.0.0/8, ${c.gateway} } tcp dport @addon_ports ct direction original reject with tcp reset`,
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

/**
 * The start script: one `nft -f` transaction that declares the table (so deleting it cannot
 * fail when it is absent), deletes it with whatever a crashed daemon left in it, and creates it
 * anew. Either all of it applies or nothing does: there is no moment without the table.
 */
export function replaceTableScript(config: FirewallConfig, carried?: CarriedElements): string {
  const table = checkTable(config.table);
  return `table inet ${table} {}\ndelete table inet ${table}\n${firewallRuleset(config, carried)}`;
}

/**
 * The elements of the `instances` and `addon_access` sets in `nft -j list table` output; an
 * element of another shape is left out (it would be refused anyway).
 */
export function carriedElements(json: string): CarriedElements {
  const carried: CarriedElements = { instances: [], addonAccess: [], addonPorts: [] };
  let parsed: { nftables?: Array<{ set?: { name?: string; elem?: unknown[] } }> };
  try {
    parsed = JSON.parse(json) as typeof parsed;
  } catch {
    return carried;
  }
  const valid = (check: () => unknown) => {
    try {
      check();
      return true;
    } catch {
      return false;
    }
  };
  for (const entry of parsed.nftables ?? []) {
    const set = entry.set;
    for (const elem of set?.elem ?? []) {
      if (set?.name === 'instances' && typeof elem === 'string' && valid(() => checkIpv4(elem))) carried.instances.push(elem);
      if (set?.name === 'addon_ports' && typeof elem === 'number' && valid(() => checkPort(elem))) carried.addonPorts.push(elem);
      const pair = (elem as { concat?: unknown[] } | null)?.concat;
      const [address, port] = Array.isArray(pair) ? pair : [];
      if (set?.name === 'addon_access' && typeof address === 'string' && typeof port === 'number') {
        if (valid(() => checkIpv4(address)) && valid(() => checkPort(port))) carried.addonAccess.push({ address, port });
      }
    }
  }
  return carried;
}

/** `nft` arguments that delete slipway's table (and nothing else). */
export function deleteTableArgs(table: string): string[] {
  return ['delete', 'table', 'inet', checkTable(table)];
}

/** `nft` arguments adding (or deleting) a sandbox's address to the set of its kind. */
export function sandboxElementArgs(table: string, kind: SandboxKind, address: string, op: 'add' | 'delete'): string[] {
  return [op, 'element', 'inet', checkTable(table), kind === 'build' ? 'builds' : 'instances', `{ ${checkIpv4(address)} }`];
}

/**
 * The `nft -f` script that replaces the allowed add-on endpoints with `endpoints` and the add-on
 * servers' ports with `serverPorts`, atomically.
 */
export function addonAccessScript(table: string, endpoints: AddonEndpoint[], serverPorts: number[]): string {
  checkTable(table);
  const elements = [...new Set(endpoints.map((e) => `${checkIpv4(e.address)} . ${checkPort(e.port)}`))].sort();
  const ports = portList(serverPorts);
  return [
    `flush set inet ${table} addon_access`,
    ...(elements.length ? [`add element inet ${table} addon_access { ${elements.join(', ')} }`] : []),
    `flush set inet ${table} addon_ports`,
    ...(ports.length ? [`add element inet ${table} addon_ports { ${ports.join(', ')} }`] : []),
    '',
  ].join('\n');
}

/** Ports checked, without repeats, in order, as nft text. */
function portList(ports: number[]): string[] {
  return [...new Set(ports.map(checkPort))].sort((a, b) => a - b).map(String);
}
