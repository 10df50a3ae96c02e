import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_AUTOSCALING, describeSettings, effectiveSettings, parseAutoscalingOverrides, storedOverrides } from './settings.js';

test('overrides are read from key=value pairs and merged over the earlier ones', () => {
  assert.deepEqual(parseAutoscalingOverrides('cpu-out=70, in-after=2m,cooldown=500ms'.replace('500ms', '1500ms')), {
    cpuOut: 70,
    inAfterMs: 120_000,
    cooldownMs: 1500,
  });
  assert.deepEqual(parseAutoscalingOverrides('out-after=8', { cpuOut: 70 }), { cpuOut: 70, outAfterMs: 8000 });
  assert.deepEqual(parseAutoscalingOverrides('inflight-out=0,cpu-in=25%'), { inflightOut: 0, cpuIn: 25 });
  assert.deepEqual(parseAutoscalingOverrides('default', { cpuOut: 70 }), {});
});

test('bad settings are refused with what was wrong', () => {
  assert.throws(() => parseAutoscalingOverrides('cpu=80'), /"cpu=80" is not a setting of the autoscaler/);
  assert.throws(() => parseAutoscalingOverrides('cpu-out'), /not a setting/);
  assert.throws(() => parseAutoscalingOverrides(''), /empty/);
  assert.throws(() => parseAutoscalingOverrides('out-after=0s'), /out-after is a duration from 1s to 60m/);
  assert.throws(() => parseAutoscalingOverrides('in-after=2h'), /in-after is a duration/);
  assert.throws(() => parseAutoscalingOverrides('cpu-out=abc'), /cpu-out is a number from 1 to 1000/);
  assert.throws(() => parseAutoscalingOverrides('cpu-out=20'), /cpu-in \(30\) must be under cpu-out \(20\)/);
  assert.throws(() => parseAutoscalingOverrides('cpu-in=50', { cpuOut: 40 }), /must be under cpu-out/);
  assert.throws(() => parseAutoscalingOverrides('mem-out=120'), /mem-out is a number from 1 to 100/);
  assert.throws(() => parseAutoscalingOverrides('mem-in=95'), /mem-in \(95\) must be under mem-out \(90\)/);
});

test('stored overrides are read back, anything unknown left out', () => {
  assert.deepEqual(storedOverrides(JSON.stringify({ cpuOut: 70, nope: 1, inAfterMs: 'x' })), { cpuOut: 70 });
  assert.deepEqual(storedOverrides('not json'), {});
  assert.deepEqual(effectiveSettings(null), DEFAULT_AUTOSCALING);
  assert.equal(effectiveSettings(JSON.stringify({ cpuIn: 10 })).cpuIn, 10);
});

test('settings print as the option reads them', () => {
  assert.equal(
    describeSettings(DEFAULT_AUTOSCALING),
    'cpu-out=80,cpu-in=30,inflight-out=0,mem-out=90,mem-in=50,out-after=6s,in-after=1m,cooldown=10s,idle-after=15m',
  );
  const back = parseAutoscalingOverrides(describeSettings(DEFAULT_AUTOSCALING));
  assert.deepEqual({ ...DEFAULT_AUTOSCALING, ...back }, DEFAULT_AUTOSCALING);
});

test('idle-after (scale to zero) reads as a duration, from 1s to 60m', () => {
  assert.deepEqual(parseAutoscalingOverrides('idle-after=5s'), { idleAfterMs: 5000 });
  assert.deepEqual(parseAutoscalingOverrides('idle-after=30m', { cpuOut: 70 }), { cpuOut: 70, idleAfterMs: 1_800_000 });
  assert.equal(DEFAULT_AUTOSCALING.idleAfterMs, 15 * 60_000);
  assert.throws(() => parseAutoscalingOverrides('idle-after=0'), /idle-after is a duration from 1s to 60m/);
  assert.throws(() => parseAutoscalingOverrides('idle-after=2h'), /idle-after is a duration/);
});
