import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addonAccessScript, firewallRuleset, sandboxElementArgv } from './firewall-rules.js';

const config = { table: 'slipway77', bridge: 'slipway77', subnet: '10.77.0.0/16', gateway: '10.77.0.1', routerPorts: [8000], forwardingEnabledBySlipway: false };

test('the table lets sandboxes out, keeps them off the host and off each other', () => {
  const rules = firewallRuleset(config);
  assert.match(rules, /^table inet slipway77 \{/);
  const lines = rules.split('\n').map((l) => l.trim());
  const input = lines.slice(lines.indexOf('chain input {'), lines.indexOf('chain forward {'));
  assert.deepEqual(input.slice(2), [
    'iifname "slipway77" ct state established,related accept',
    'iifname "slipway77" ip saddr . tcp dport @addon_access accept',
    'iifname "slipway77" ip saddr @instances ip daddr 10.77.0.1 tcp dport { 8000 } accept',
    'iifname "slipway77" drop',
    '}',
  ]);
  const forward = lines.slice(lines.indexOf('chain forward {'), lines.indexOf('chain postrouting {'));
  assert.deepEqual(forward.slice(2), [
    'iifname "slipway77" oifname "slipway77" drop',
    'ip daddr 10.77.0.0/16 ct state established,related accept',
    'ip daddr 10.77.0.0/16 drop',
    'iifname "slipway77" ip saddr 10.77.0.0/16 accept',
    '}',
  ]);
  assert.ok(lines.includes('iifname "slipway77" ip saddr 10.77.0.0/16 oifname != "slipway77" masquerade'));
});

test('when slipway turned forwarding on, only traffic of slipway bridges is forwarded', () => {
  const rules = firewallRuleset({ ...config, forwardingEnabledBySlipway: true });
  assert.ok(rules.includes('iifname != "slipway*" oifname != "slipway*" drop'));
  assert.ok(!firewallRuleset(config).includes('slipway*'));
});

test('builds never reach the router port; without router ports no rule names one', () => {
  const rules = firewallRuleset({ ...config, routerPorts: [] });
  assert.ok(!rules.includes('dport {'));
  assert.ok(firewallRuleset(config).includes('ip saddr @instances'));
  assert.ok(!firewallRuleset(config).includes('ip saddr @builds ip daddr'));
});

test('set elements and add-on access are commands with checked values', () => {
  assert.deepEqual(sandboxElementArgv('/usr/sbin/nft', 'slipway77', 'build', '10.77.0.9', 'add'), ['/usr/sbin/nft', 'add', 'element', 'inet', 'slipway77', 'builds', '{ 10.77.0.9 }']);
  assert.equal(
    addonAccessScript('slipway77', [{ address: '10.77.0.9', port: 5433 }, { address: '10.77.0.9', port: 5433 }, { address: '10.77.0.3', port: 6400 }]),
    'flush set inet slipway77 addon_access\nadd element inet slipway77 addon_access { 10.77.0.3 . 6400, 10.77.0.9 . 5433 }\n',
  );
  assert.equal(addonAccessScript('slipway77', []), 'flush set inet slipway77 addon_access\n');
  assert.throws(() => sandboxElementArgv('nft', 'slipway77', 'build', '10.77.0.9 } ; flush ruleset', 'add'), /Not an IPv4/);
  assert.throws(() => firewallRuleset({ ...config, bridge: 'br0"; flush ruleset' }), /Invalid bridge/);
  assert.throws(() => firewallRuleset({ ...config, table: 'Bad Table' }), /Invalid nftables table/);
});
