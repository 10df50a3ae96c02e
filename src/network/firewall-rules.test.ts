import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  addonAccessScript,
  bridgeFamily,
  deleteTableArgs,
  carriedElements,
  firewallRuleset,
  replaceTableScript,
  sandboxElementArgs,
  type FirewallConfig,
} from './firewall-rules.js';
import { nameserversOf } from './firewall.js';

const config: FirewallConfig = {
  table: 'slipway77',
  bridge: 'slipway77',
  subnet: '10.77.0.0/16',
  gateway: '10.77.0.1',
  routerPorts: [8000],
  forwardingEnabledBySlipway: false,
};

/** The lines of one chain, without its header and closing brace. */
function chain(rules: string, name: string): string[] {
  const lines = rules.split('\n').map((l) => l.trim());
  const start = lines.indexOf(`chain ${name} {`);
  assert.ok(start >= 0, `chain ${name} exists`);
  return lines.slice(start + 1, lines.indexOf('}', start));
}

test('one table of its own, with the four sets and four chains', () => {
  const rules = firewallRuleset(config);
  assert.match(rules, /^table inet slipway77 \{\n/);
  assert.equal(rules.match(/^table /gm)?.length, 1, 'no other table is named');
  const lines = rules.split('\n').map((l) => l.trim());
  assert.deepEqual(lines.slice(1, 13), [
    'set builds {',
    'type ipv4_addr',
    '}',
    'set instances {',
    'type ipv4_addr',
    '}',
    'set addon_access {',
    'type ipv4_addr . inet_service',
    '}',
    'set addon_ports {',
    'type inet_service',
    '}',
  ]);
  assert.deepEqual(
    lines.filter((l) => l.startsWith('chain ')),
    ['chain input {', 'chain forward {', 'chain output {', 'chain postrouting {'],
  );
});

test("on the host, only root opens connections to the add-on servers' ports, on loopback and the gateway", () => {
  assert.deepEqual(chain(firewallRuleset(config), 'output'), [
    'type filter hook output priority filter; policy accept;',
    'meta skuid != 0 ip daddr { 127.0.0.0/8, 10.77.0.1 } tcp dport @addon_ports ct direction original reject with tcp reset',
  ]);
});

test("with sandboxes on other machines (a swarm's other nodes), what they send to the host meets the bridge's rules", () => {
  const input = chain(firewallRuleset({ ...config, subnetBeyondBridge: true }), 'input');
  const beyond = 'iifname != { "slipway77", "lo" } ip saddr 10.77.0.0/16';
  assert.deepEqual(input.slice(-4), [
    `${beyond} ct state established,related accept`,
    `${beyond} ip daddr 10.77.0.1 ip saddr . tcp dport @addon_access accept`,
    `${beyond} ip saddr @instances ip daddr 10.77.0.1 tcp dport { 8000 } accept`,
    `${beyond} drop`,
  ]);
  assert.ok(!firewallRuleset(config).includes('"lo"'), 'a single machine keeps its rules');
});

test('from the bridge the host accepts replies, linked add-ons and, from instances, the router; nothing else', () => {
  assert.deepEqual(chain(firewallRuleset(config), 'input'), [
    'type filter hook input priority filter; policy accept;',
    'iifname "slipway77" ct state established,related accept',
    'iifname "slipway77" ip daddr 10.77.0.1 ip saddr . tcp dport @addon_access accept',
    'iifname "slipway77" ip saddr @instances ip daddr 10.77.0.1 tcp dport { 8000 } accept',
    // No `ip` in it: IPv6, link-local included, is dropped too.
    'iifname "slipway77" drop',
  ]);
});

test('the host forwards sandboxes out to the public world, never to each other nor private ranges, and nothing in but replies', () => {
  assert.deepEqual(chain(firewallRuleset(config), 'forward'), [
    'type filter hook forward priority filter; policy accept;',
    'iifname "slipway77" oifname "slipway77" drop',
    'ip daddr 10.77.0.0/16 ct state established,related accept',
    'ip daddr 10.77.0.0/16 drop',
    'iifname "slipway77" meta nfproto ipv6 drop',
    'iifname "slipway77" ip daddr { 0.0.0.0/8, 10.0.0.0/8, 100.64.0.0/10, 127.0.0.0/8, 169.254.0.0/16, 172.16.0.0/12, 192.168.0.0/16 } drop',
    'iifname "slipway77" ip saddr @builds accept',
    'iifname "slipway77" ip saddr @instances accept',
    'iifname "slipway77" drop',
  ]);
  assert.deepEqual(chain(firewallRuleset(config), 'postrouting'), [
    'type nat hook postrouting priority srcnat; policy accept;',
    'iifname "slipway77" ip saddr 10.77.0.0/16 oifname != "slipway77" masquerade',
  ]);
});

test('when slipway turned forwarding on, forwarded traffic touching no slipway bridge is dropped', () => {
  const forward = chain(firewallRuleset({ ...config, forwardingEnabledBySlipway: true }), 'forward');
  assert.equal(forward.at(-1), 'iifname != "slipway*" oifname != "slipway*" drop');
  assert.ok(!firewallRuleset(config).includes('slipway*'));
  assert.equal(bridgeFamily('slipway123'), 'slipway');
});

test('builds never reach the router port; without router ports no rule names one', () => {
  assert.ok(!chain(firewallRuleset({ ...config, routerPorts: [] }), 'input').some((l) => l.includes('dport {')));
  assert.deepEqual(
    chain(firewallRuleset({ ...config, routerPorts: [8443, 8000, 8000] }), 'input').filter((l) => l.includes('dport {')),
    ['iifname "slipway77" ip saddr @instances ip daddr 10.77.0.1 tcp dport { 8000, 8443 } accept'],
  );
});

test('start replaces a stale table in one transaction; stop deletes only ours', () => {
  const script = replaceTableScript(config);
  assert.ok(script.startsWith('table inet slipway77 {}\ndelete table inet slipway77\ntable inet slipway77 {\n'));
  assert.equal(script, `table inet slipway77 {}\ndelete table inet slipway77\n${firewallRuleset(config)}`);
  assert.deepEqual(deleteTableArgs('slipway77'), ['delete', 'table', 'inet', 'slipway77']);
});

test('sandbox addresses go to the set of their kind', () => {
  assert.deepEqual(sandboxElementArgs('slipway77', 'build', '10.77.0.9', 'add'), [
    'add',
    'element',
    'inet',
    'slipway77',
    'builds',
    '{ 10.77.0.9 }',
  ]);
  assert.deepEqual(sandboxElementArgs('slipway77', 'instance', '10.77.0.9', 'delete'), [
    'delete',
    'element',
    'inet',
    'slipway77',
    'instances',
    '{ 10.77.0.9 }',
  ]);
});

test('add-on access and ports are replaced whole: flushed and refilled in one script, sorted and without repeats', () => {
  assert.equal(
    addonAccessScript(
      'slipway77',
      [
        { address: '10.77.0.9', port: 5433 },
        { address: '10.77.0.9', port: 5433 },
        { address: '10.77.0.3', port: 6400 },
      ],
      [6400, 5433, 6400, 20001],
    ),
    [
      'flush set inet slipway77 addon_access',
      'add element inet slipway77 addon_access { 10.77.0.3 . 6400, 10.77.0.9 . 5433 }',
      'flush set inet slipway77 addon_ports',
      'add element inet slipway77 addon_ports { 5433, 6400, 20001 }',
      '',
    ].join('\n'),
  );
  assert.equal(addonAccessScript('slipway77', [], []), 'flush set inet slipway77 addon_access\nflush set inet slipway77 addon_ports\n');
});

test('nothing that is not an address, a port or a name reaches nft', () => {
  assert.throws(() => sandboxElementArgs('slipway77', 'build', '10.77.0.9 } ; flush ruleset', 'add'), /Not an IPv4 address/);
  assert.throws(() => sandboxElementArgs('slipway77', 'build', '10.77.0.256', 'add'), /Not an IPv4 address/);
  assert.throws(() => addonAccessScript('slipway77', [{ address: '10.77.0.2', port: 70000 }], []), /Not a port/);
  assert.throws(() => addonAccessScript('slipway77', [], [0]), /Not a port/);
  assert.throws(() => firewallRuleset({ ...config, bridge: 'br0"; flush ruleset' }), /Invalid bridge/);
  assert.throws(() => firewallRuleset({ ...config, table: 'Bad Table' }), /Invalid nftables table/);
  assert.throws(() => deleteTableArgs('filter; flush ruleset'), /Invalid nftables table/);
  assert.throws(() => firewallRuleset({ ...config, subnet: '10.77.0.0/40' }), /Invalid subnet/);
  assert.throws(() => firewallRuleset({ ...config, routerPorts: [0] }), /Not a port/);
});

test("a new daemon's table carries the instances and their add-on access over, never the builds", () => {
  const listed = JSON.stringify({
    nftables: [
      { metainfo: { version: '1.0.6' } },
      { set: { family: 'inet', name: 'builds', table: 'slipway77', elem: ['10.77.0.9'] } },
      { set: { family: 'inet', name: 'instances', table: 'slipway77', elem: ['10.77.0.5', '10.77.0.6', '10.77.0.999', 'x'] } },
      { set: { family: 'inet', name: 'addon_access', elem: [{ concat: ['10.77.0.5', 6379] }, { concat: ['10.77.0.6', 70000] }] } },
      { set: { family: 'inet', name: 'addon_ports', elem: [6379, 20001, 70000, '1; flush ruleset'] } },
    ],
  });
  const carried = carriedElements(listed);
  assert.deepEqual(carried, {
    instances: ['10.77.0.5', '10.77.0.6'],
    addonAccess: [{ address: '10.77.0.5', port: 6379 }],
    addonPorts: [6379, 20001],
  });
  const script = replaceTableScript(config, carried);
  assert.match(script, /set instances \{\n\s+type ipv4_addr\n\s+elements = \{ 10\.77\.0\.5, 10\.77\.0\.6 \}\n\s+\}/);
  assert.match(script, /set addon_access \{\n\s+type ipv4_addr \. inet_service\n\s+elements = \{ 10\.77\.0\.5 \. 6379 \}\n\s+\}/);
  assert.match(script, /set addon_ports \{\n\s+type inet_service\n\s+elements = \{ 6379, 20001 \}\n\s+\}/);
  assert.match(script, /set builds \{\n\s+type ipv4_addr\n\s+\}/, 'builds ended with the last daemon');
  assert.deepEqual(carriedElements('not json'), { instances: [], addonAccess: [], addonPorts: [] });
});

test('sandboxes are kept from link-local, private and loopback ranges, but for the name servers (port 53) and what the operator allows', () => {
  const forward = chain(firewallRuleset({ ...config, egress: { allow: ['192.168.233.0/24'], nameservers: ['10.255.255.53'] } }), 'forward');
  const blocked = forward.findIndex((r) => r.includes('169.254.0.0/16') && r.endsWith('drop'));
  assert.ok(blocked >= 0, forward.join('\n'));
  for (const range of ['10.0.0.0/8', '100.64.0.0/10', '172.16.0.0/12', '192.168.0.0/16', '127.0.0.0/8'])
    assert.ok(forward[blocked]!.includes(range));
  const dns = forward.findIndex((r) => r.includes('@instances') && r.includes('10.255.255.53') && r.includes('th dport 53 accept'));
  const allowed = forward.findIndex((r) => r.includes('@builds') && r.includes('192.168.233.0/24') && r.endsWith('accept'));
  assert.ok(dns >= 0 && dns < blocked, 'the name servers are reached on port 53 before the ranges are refused');
  assert.ok(allowed >= 0 && allowed < blocked, "the operator's range is reached before the ranges are refused");
  const acceptAll = forward.findIndex((r) => r.endsWith('ip saddr @instances accept'));
  assert.ok(blocked < acceptAll, 'the refusal comes before the general accept');
  assert.throws(() => firewallRuleset({ ...config, egress: { allow: ['192.168.233.7/24'], nameservers: [] } }), /use 192\.168\.233\.0\/24/);
});

test('the name servers of a resolv.conf, without loopback ones', () => {
  assert.deepEqual(nameserversOf('# comment\nnameserver 10.255.255.53\nnameserver 127.0.0.53\nsearch example\nnameserver ::1\n'), [
    '10.255.255.53',
  ]);
});
