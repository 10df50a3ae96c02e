/**
 * slipway's firewall applied with the real nft, on a table name of its own so a running daemon's
 * table is never touched. IPv4 forwarding is switched in a file of the test's own: the host's
 * setting stays as it is.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Firewall, NFT, type FirewallOptions } from '../../src/network/firewall.js';

const skip =
  process.getuid?.() !== 0
    ? 'nftables tables can only be made by root'
    : !existsSync(NFT)
      ? `${NFT} is missing (apt-get install nftables)`
      : false;

const n = 1 + Math.floor(Math.random() * 250);
const suffix = `${process.pid % 10000}${n}`;
const table = `swfwtest${suffix}`;
const canary = `swfwcanary${suffix}`;
const bridge = `swfwt${suffix}`.slice(0, 15);
const subnet = `10.78.${n}.0/24`;
const gateway = `10.78.${n}.1`;
let dir: string;
let options: FirewallOptions;
let firewall: Firewall;

function nft(...args: string[]): string {
  return execFileSync(NFT, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function tables(): string[] {
  return nft('list', 'tables', 'inet')
    .split('\n')
    .map((l) => l.trim().replace(/^table inet /, ''))
    .filter(Boolean);
}

type NftObject = Record<string, Record<string, unknown>>;

function listTable(): NftObject[] {
  return (JSON.parse(nft('-j', 'list', 'table', 'inet', table)) as { nftables: NftObject[] }).nftables;
}

/** The elements of one set, as nft -j gives them back. */
function elements(set: string): unknown[] {
  const found = listTable().find((o) => o.set?.name === set);
  assert.ok(found, `set ${set} exists`);
  return (found.set!.elem as unknown[] | undefined) ?? [];
}

function rulesOf(chain: string): string[] {
  const out = nft('list', 'chain', 'inet', table, chain);
  return out
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('table') && !l.startsWith('chain') && l !== '}' && !l.startsWith('type '));
}

before(() => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), 'slipway-firewall-'));
  writeFileSync(join(dir, 'ip_forward'), '1\n');
  // Another table (standing for anybody else's rules) and a stale one of ours, as a crash leaves it.
  execFileSync(NFT, ['-f', '-'], {
    input: `table inet ${canary} {\n  chain keep {\n  }\n}\ntable inet ${table} {\n  chain leftover {\n  }\n}\n`,
  });
  options = {
    table,
    bridge,
    subnet,
    gateway,
    routerPorts: [8000],
    forwarding: { sysctl: join(dir, 'ip_forward'), marker: join(dir, 'marker') },
  };
  firewall = new Firewall(options);
});

after(async () => {
  if (skip) return;
  await firewall.stop().catch(() => undefined);
  for (const name of [table, canary]) {
    try {
      nft('delete', 'table', 'inet', name);
    } catch {
      // already gone
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

test('start replaces the stale table with the whole ruleset, and touches no other table', { skip }, async () => {
  await firewall.start();
  const objects = listTable();
  assert.deepEqual(
    objects.filter((o) => o.set).map((o) => [o.set!.name, o.set!.type]),
    [
      ['builds', 'ipv4_addr'],
      ['instances', 'ipv4_addr'],
      ['addon_access', ['ipv4_addr', 'inet_service']],
      ['addon_ports', 'inet_service'],
    ],
  );
  assert.deepEqual(
    objects.filter((o) => o.chain).map((o) => [o.chain!.name, o.chain!.hook]),
    [
      ['input', 'input'],
      ['forward', 'forward'],
      ['output', 'output'],
      ['postrouting', 'postrouting'],
    ],
  );
  assert.ok(tables().includes(canary), 'the other table is still there');
  assert.deepEqual(rulesOf('input').slice(-1), [`iifname "${bridge}" drop`]);
  assert.ok(rulesOf('postrouting').some((r) => r.includes('masquerade')));
  assert.equal(readFileSync(join(dir, 'ip_forward'), 'utf8').trim(), '1');
  assert.ok(!existsSync(join(dir, 'marker')), "forwarding was on already: not marked as slipway's");
  assert.ok(!rulesOf('forward').some((r) => r.includes('*')), 'and not guarded');
});

test('sandboxes and add-on endpoints come and go as set elements', { skip }, async () => {
  await firewall.addSandbox('instance', `10.78.${n}.2`);
  await firewall.addSandbox('build', `10.78.${n}.3`);
  await firewall.setAddonAccess(
    [
      { address: `10.78.${n}.2`, port: 5433 },
      { address: `10.78.${n}.3`, port: 6401 },
    ],
    [5433, 6401],
  );
  assert.deepEqual(elements('instances'), [`10.78.${n}.2`]);
  assert.deepEqual(elements('builds'), [`10.78.${n}.3`]);
  const pairs = elements('addon_access')
    .map((e) => JSON.stringify(e))
    .sort();
  assert.deepEqual(pairs, [JSON.stringify({ concat: [`10.78.${n}.2`, 5433] }), JSON.stringify({ concat: [`10.78.${n}.3`, 6401] })]);

  assert.deepEqual(elements('addon_ports'), [5433, 6401]);
  await firewall.setAddonAccess([{ address: `10.78.${n}.2`, port: 6402 }], [6402]);
  assert.deepEqual(elements('addon_access'), [{ concat: [`10.78.${n}.2`, 6402] }], 'replaced, not added to');
  assert.deepEqual(elements('addon_ports'), [6402]);
  await firewall.removeSandbox('build', `10.78.${n}.3`);
  await firewall.removeSandbox('build', `10.78.${n}.3`); // twice is harmless
  assert.deepEqual(elements('builds'), []);
  await assert.rejects(firewall.addSandbox('instance', `10.78.${n}.2 }; flush ruleset`), /Not an IPv4 address/);
});

test("the next daemon's start keeps the instances and their add-on access, not the builds", { skip }, async () => {
  await firewall.addSandbox('build', `10.78.${n}.3`);
  assert.deepEqual(elements('builds'), [`10.78.${n}.3`], 'a build is in the set before the restart');
  // The daemon that made the table ends without stopping it (killed, or a crash); the next one
  // has a firewall of its own that knows only what the kernel's table holds.
  firewall = new Firewall(options);
  await firewall.start();
  assert.deepEqual(elements('instances'), [`10.78.${n}.2`], 'the instance that outlived the daemon keeps its network');
  assert.deepEqual(elements('addon_access'), [{ concat: [`10.78.${n}.2`, 6402] }], 'and its add-on');
  assert.deepEqual(elements('builds'), [], 'builds end with the daemon');
});

test('stop deletes the table, and only it', { skip }, async () => {
  await firewall.stop();
  assert.ok(!tables().includes(table), 'our table is gone');
  assert.ok(tables().includes(canary), 'the other table is still there');
  assert.equal(readFileSync(join(dir, 'ip_forward'), 'utf8').trim(), '1', 'forwarding the administrator turned on stays on');
  await assert.rejects(firewall.addSandbox('instance', `10.78.${n}.2`), /not in place/);
});
