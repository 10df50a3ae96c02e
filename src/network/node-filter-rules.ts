/**
 * The filter slipway installs on the swarm's other nodes (a node's tasks' bridge), as text built
 * by pure functions (tested as data), like firewall-rules.ts for the control machine. A table
 * holds one family, so it is one name in two families, replaced together in one transaction:
 *
 * - `bridge <table>`: frames the bridge would pass from one task's port to another's are
 *   dropped (tasks never talk to each other, the `isolated` ports of the control machine);
 * - `inet <table>`: nothing from the bridge reaches the node itself but replies, and what the
 *   node forwards from the bridge goes only to the control machine (router, add-ons), whose own
 *   table filters it further.
 */
import { checkIpv4, checkTable } from './firewall-rules.js';

export interface NodeFilterConfig {
  /** e.g. `slipway77node`. */
  table: string;
  /** The node's tasks' bridge (its configuration network's bridge name). */
  bridge: string;
  /** The node's part of the tasks' subnet (its configuration network's), e.g. `172.31.130.0/24`. */
  subnet: string;
  /** The control machine's addresses the node's tasks may reach (where the router and add-ons listen). */
  controlMachine: string[];
}

const IFNAME = /^[a-zA-Z][a-zA-Z0-9_.-]{0,14}$/;
const CIDR = /^(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})\/(\d{1,2})$/;

function checkConfig(c: NodeFilterConfig): NodeFilterConfig {
  checkTable(c.table);
  if (!IFNAME.test(c.bridge))
    throw new Error(`Invalid bridge name ${JSON.stringify(c.bridge)}: use up to 15 letters, digits, ".", "_" or "-".`);
  if (c.controlMachine.length === 0) throw new Error("The control machine's address is needed: the node's tasks reach nothing else.");
  const m = CIDR.exec(c.subnet);
  if (!m || Number(m[2]) > 32) throw new Error(`Invalid subnet ${JSON.stringify(c.subnet)}; expected e.g. 172.31.130.0/24.`);
  checkIpv4(m[1]!);
  c.controlMachine.forEach(checkIpv4);
  return c;
}

/** The two tables, as `nft -f` reads them. */
export function nodeFilterRuleset(config: NodeFilterConfig): string {
  const c = checkConfig(config);
  const br = JSON.stringify(c.bridge);
  const control = [...new Set(c.controlMachine)].sort().join(', ');
  return [
    `table bridge ${c.table} {`,
    // The bridge's forward hook sees only frames going from one port to another: what a task
    // sends to the node itself (its gateway) passes the input hook instead. Frames are told by
    // the node's part of the subnet, not the bridge's name: matching that (`meta ibrname`)
    // needs a kernel module not every kernel has. Tasks have no capabilities, so they send no
    // frame of their own making: IPv4 and ARP are what they can send each other.
    '  chain forward {',
    '    type filter hook forward priority filter; policy accept;',
    `    ether type ip ip saddr ${c.subnet} ip daddr ${c.subnet} drop`,
    `    ether type arp arp saddr ip ${c.subnet} arp daddr ip ${c.subnet} drop`,
    '  }',
    '}',
    `table inet ${c.table} {`,
    // `iifname` alone (no `ip`) also catches IPv6, link-local included.
    '  chain input {',
    '    type filter hook input priority filter; policy accept;',
    `    iifname ${br} ct state established,related accept`,
    `    iifname ${br} drop`,
    '  }',
    '  chain forward {',
    '    type filter hook forward priority filter; policy accept;',
    // Replies to the control machine's health checks and the router's requests.
    `    iifname ${br} ct state established,related accept`,
    `    iifname ${br} oifname ${br} drop`,
    `    iifname ${br} ip daddr { ${control} } accept`,
    `    iifname ${br} drop`,
    '  }',
    '}',
    '',
  ].join('\n');
}

/**
 * The script the node runs: declares both tables (so deleting them cannot fail when absent),
 * deletes them with whatever an earlier run put there, and creates them anew, in one
 * transaction: applying it again changes nothing, and there is no moment without the filter.
 */
export function replaceNodeFilterScript(config: NodeFilterConfig): string {
  const table = checkTable(config.table);
  return [
    `table bridge ${table} {}`,
    `delete table bridge ${table}`,
    `table inet ${table} {}`,
    `delete table inet ${table}`,
    nodeFilterRuleset(config),
  ].join('\n');
}
