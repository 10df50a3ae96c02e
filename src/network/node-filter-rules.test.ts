import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nodeFilterRuleset, replaceNodeFilterScript, type NodeFilterConfig } from './node-filter-rules.js';

const config: NodeFilterConfig = {
  table: 'slipway77node',
  bridge: 'slipway77sw0',
  subnet: '172.31.130.0/24',
  controlMachine: ['172.31.0.1'],
};

/** The lines of one family's chain, without its header and closing brace. */
function chain(rules: string, family: string, name: string): string[] {
  const lines = rules.split('\n').map((l) => l.trim());
  const table = lines.indexOf(`table ${family} slipway77node {`);
  assert.ok(table >= 0, `table ${family} exists`);
  const start = lines.indexOf(`chain ${name} {`, table);
  assert.ok(start >= 0, `chain ${name} exists in ${family}`);
  return lines.slice(start + 1, lines.indexOf('}', start));
}

test("one name of slipway's own, in the bridge and inet families only", () => {
  const rules = nodeFilterRuleset(config);
  assert.deepEqual(rules.match(/^table .*$/gm), ['table bridge slipway77node {', 'table inet slipway77node {']);
  assert.deepEqual(rules.match(/chain \w+/g), ['chain forward', 'chain input', 'chain forward']);
});

test('tasks never talk to each other across the bridge: IPv4 and ARP between addresses of the part are dropped', () => {
  assert.deepEqual(chain(nodeFilterRuleset(config), 'bridge', 'forward'), [
    'type filter hook forward priority filter; policy accept;',
    'ether type ip ip saddr 172.31.130.0/24 ip daddr 172.31.130.0/24 drop',
    'ether type arp arp saddr ip 172.31.130.0/24 arp daddr ip 172.31.130.0/24 drop',
  ]);
});

test('nothing from the bridge reaches the node itself but replies, IPv6 included', () => {
  assert.deepEqual(chain(nodeFilterRuleset(config), 'inet', 'input'), [
    'type filter hook input priority filter; policy accept;',
    'iifname "slipway77sw0" ct state established,related accept',
    'iifname "slipway77sw0" drop',
  ]);
});

test('the node forwards from the bridge to the control machine only, and replies', () => {
  const forward = chain(nodeFilterRuleset({ ...config, controlMachine: ['172.31.0.1', '10.0.0.1', '172.31.0.1'] }), 'inet', 'forward');
  assert.deepEqual(forward, [
    'type filter hook forward priority filter; policy accept;',
    'iifname "slipway77sw0" ct state established,related accept',
    'iifname "slipway77sw0" oifname "slipway77sw0" drop',
    'iifname "slipway77sw0" ip daddr { 10.0.0.1, 172.31.0.1 } accept',
    'iifname "slipway77sw0" drop',
  ]);
  // Nothing else leaves the bridge: the last rule of the bridge's traffic is a drop.
  assert.equal(forward.at(-1), 'iifname "slipway77sw0" drop');
});

test('the script replaces both tables in one transaction, so applying it again changes nothing', () => {
  const script = replaceNodeFilterScript(config);
  assert.ok(
    script.startsWith(
      'table bridge slipway77node {}\ndelete table bridge slipway77node\ntable inet slipway77node {}\ndelete table inet slipway77node\n',
    ),
  );
  assert.ok(script.endsWith(nodeFilterRuleset(config)));
  assert.equal(replaceNodeFilterScript(config), script);
});

test('names and addresses that would change the rules are refused', () => {
  assert.throws(() => nodeFilterRuleset({ ...config, table: 'x; flush ruleset' }), /Invalid nftables table name/);
  assert.throws(() => nodeFilterRuleset({ ...config, bridge: 'br" accept' }), /Invalid bridge name/);
  assert.throws(() => nodeFilterRuleset({ ...config, subnet: '172.31.130.0/24 } accept' }), /Invalid subnet/);
  assert.throws(() => nodeFilterRuleset({ ...config, subnet: '172.31.130.0/40' }), /Invalid subnet/);
  assert.throws(() => nodeFilterRuleset({ ...config, controlMachine: ['1.2.3.4 accept'] }), /Not an IPv4 address/);
  assert.throws(() => nodeFilterRuleset({ ...config, controlMachine: [] }), /control machine's address is needed/);
});
