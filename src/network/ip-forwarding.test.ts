import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { enableForwarding, forwardingIsSlipways, restoreForwarding, type ForwardingFiles } from './ip-forwarding.js';

/** Files standing in for /proc/sys/net/ipv4/ip_forward and the marker in /run. */
function files(initial: '0' | '1'): ForwardingFiles & { done(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-forwarding-'));
  writeFileSync(join(dir, 'ip_forward'), `${initial}\n`);
  return { sysctl: join(dir, 'ip_forward'), marker: join(dir, 'marker'), done: () => rmSync(dir, { recursive: true, force: true }) };
}

test("forwarding that was off is turned on, marked as slipway's and turned back off", () => {
  const f = files('0');
  try {
    assert.equal(forwardingIsSlipways(f), true, 'off: the table must guard what enabling it opens');
    enableForwarding(f);
    assert.equal(readFileSync(f.sysctl, 'utf8').trim(), '1');
    assert.ok(existsSync(f.marker));
    // A daemon started next (or after a kill -9) still knows forwarding is slipway's.
    assert.equal(forwardingIsSlipways(f), true);
    restoreForwarding(f);
    assert.equal(readFileSync(f.sysctl, 'utf8').trim(), '0');
    assert.ok(!existsSync(f.marker));
  } finally {
    f.done();
  }
});

test('forwarding the administrator turned on is left alone and not guarded', () => {
  const f = files('1');
  try {
    assert.equal(forwardingIsSlipways(f), false);
    enableForwarding(f);
    assert.equal(readFileSync(f.sysctl, 'utf8').trim(), '1');
    assert.ok(!existsSync(f.marker), 'no marker: slipway did not turn it on');
  } finally {
    f.done();
  }
});
