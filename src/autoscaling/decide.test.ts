import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decide, type LoadSample, type ScalingState } from './decide.js';
import { DEFAULT_AUTOSCALING, type AutoscalingSettings } from './settings.js';

const SAMPLE_MS = 2000;

/**
 * Runs the autoscaler's loop on a synthetic load: `load(t)` is the app's total CPU (% of one core,
 * spread over its instances; each instance tops out at one core, as a Node app does) and its queue.
 * Decisions apply at once; returns them with the time each was taken.
 */
function simulate(
  load: (t: number) => { cpu: number; queued?: number },
  options: { settings?: Partial<AutoscalingSettings>; state?: Partial<ScalingState>; untilMs: number },
): Array<{ t: number; from: number; to: number; reason: string }> {
  const settings = { ...DEFAULT_AUTOSCALING, ...options.settings };
  const state: ScalingState = { instances: 1, minInstances: 1, maxInstances: 10, ...options.state };
  const samples: LoadSample[] = [];
  const decisions: Array<{ t: number; from: number; to: number; reason: string }> = [];
  for (let t = SAMPLE_MS; t <= options.untilMs; t += SAMPLE_MS) {
    const { cpu, queued = 0 } = load(t);
    samples.push({
      from: t - SAMPLE_MS,
      at: t,
      instances: state.instances,
      cpuPercent: Math.min(100, cpu / state.instances),
      queued,
      inflight: 0,
    });
    const d = decide(samples, settings, state, t);
    if (d) {
      decisions.push({ t, from: d.from, to: d.to, reason: d.reason });
      state.instances = d.to;
      state.lastChangeAt = t;
    }
  }
  return decisions;
}

test('a step up scales out after out-after of saturation, until the CPU is under cpu-out', () => {
  const decisions = simulate((t) => ({ cpu: t > 10_000 ? 250 : 20 }), { untilMs: 60_000 });
  // Saturated from the sample ending at 12 s (interval 10–12 s): three samples make 6 s at 16 s.
  assert.equal(decisions[0]?.t, 16_000);
  assert.deepEqual(
    decisions.map((d) => [d.from, d.to]),
    [
      [1, 2],
      [2, 3],
      [3, 4],
    ],
  );
  assert.match(decisions[0]!.reason, /^CPU 100% of 1 instance for 6 s$/);
  assert.match(decisions[1]!.reason, /^CPU 100% of 2 instances for 6 s$/);
  // Each instance tops out at one core, so each step sees 100% and adds one; at 4 instances the
  // load is 62.5% each: it stays there.
  assert.equal(decisions.length, 3);
});

test('a step down scales in one instance at a time, each after in-after of low load', () => {
  const decisions = simulate((t) => ({ cpu: t <= 20_000 ? 240 : 20 }), {
    state: { instances: 4, maxInstances: 4 },
    untilMs: 300_000,
  });
  assert.deepEqual(
    decisions.map((d) => [d.from, d.to]),
    [
      [4, 3],
      [3, 2],
      [2, 1],
    ],
  );
  // The first needs in-after (60 s) of low load from 20 s; each next one the cool-down first.
  assert.equal(decisions[0]?.t, 80_000);
  assert.equal(decisions[1]?.t, 80_000 + 10_000 + 60_000);
  assert.match(decisions[0]!.reason, /^CPU 5% of 4 instances for 60 s \(under 30% on 3\)$/);
});

test('a steady load at the threshold never scales out and in again', () => {
  for (const cpu of [79, 80, 81, 120, 159, 160, 161, 239, 240, 241, 300]) {
    const decisions = simulate(() => ({ cpu }), { untilMs: 3600_000, settings: { inAfterMs: 10_000 } });
    const directions = decisions.map((d) => (d.to > d.from ? 'up' : 'down'));
    assert.ok(!directions.includes('down'), `load ${cpu}%: ${JSON.stringify(decisions)}`);
    assert.ok(decisions.length <= 3, `load ${cpu}%: ${JSON.stringify(decisions)}`);
  }
  // Just over what one instance fewer would carry under cpu-in: it scales in once and stays.
  const decisions = simulate(() => ({ cpu: 59 }), { state: { instances: 3 }, untilMs: 3600_000, settings: { inAfterMs: 10_000 } });
  assert.deepEqual(
    decisions.map((d) => [d.from, d.to]),
    [[3, 2]],
  );
});

test('a load swinging around the threshold does not oscillate', () => {
  // 70–90% of one instance, changing every sample: never a full out-after over cpu-out.
  const decisions = simulate((t) => ({ cpu: (t / SAMPLE_MS) % 2 === 0 ? 90 : 70 }), { untilMs: 600_000, settings: { inAfterMs: 10_000 } });
  assert.deepEqual(decisions, []);
});

test('the cool-down keeps samples of a change from being judged', () => {
  const decisions = simulate(() => ({ cpu: 400 }), { untilMs: 40_000, settings: { cooldownMs: 20_000 }, state: { maxInstances: 10 } });
  // 6 s to the first decision, then 20 s of cool-down and 6 s of saturation before the next.
  assert.deepEqual(
    decisions.map((d) => d.t),
    [6_000, 6_000 + 20_000 + 6_000],
  );
});

test('the count stays within its range, and a count outside it is brought back', () => {
  const out = simulate(() => ({ cpu: 1000 }), { state: { maxInstances: 3 }, untilMs: 120_000 });
  assert.deepEqual(
    out.map((d) => d.to),
    [2, 3],
  );
  const down = simulate(() => ({ cpu: 0 }), { state: { instances: 3, minInstances: 2, maxInstances: 5 }, untilMs: 600_000 });
  assert.deepEqual(
    down.map((d) => d.to),
    [2],
  );
  const settings = DEFAULT_AUTOSCALING;
  assert.deepEqual(decide([], settings, { instances: 1, minInstances: 2, maxInstances: 4 }, 0), {
    direction: 'up',
    from: 1,
    to: 2,
    reason: 'the minimum is 2 instances',
  });
  assert.equal(decide([], settings, { instances: 5, minInstances: 2, maxInstances: 4 }, 0)?.to, 4);
  assert.equal(decide([], settings, { instances: 2, minInstances: 2, maxInstances: 2 }, 0), undefined);
});

test('requests queued at the router scale out even when the CPU is not saturated', () => {
  const decisions = simulate(() => ({ cpu: 30, queued: 12 }), { untilMs: 8_000 });
  assert.deepEqual(
    decisions.map((d) => [d.from, d.to, d.reason]),
    [[1, 2, '12 requests queued at the router for 6 s']],
  );
});

test('requests in flight count only when inflight-out is set', () => {
  const samples: LoadSample[] = [0, 1, 2, 3].map((k) => ({
    from: k * SAMPLE_MS,
    at: (k + 1) * SAMPLE_MS,
    instances: 2,
    cpuPercent: 40,
    queued: 0,
    inflight: 50,
  }));
  const state = { instances: 2, minInstances: 1, maxInstances: 4 };
  assert.equal(decide(samples, DEFAULT_AUTOSCALING, state, 8_000), undefined);
  const d = decide(samples, { ...DEFAULT_AUTOSCALING, inflightOut: 20 }, state, 8_000);
  // Read at each sample's time: four readings 2 s apart make 6 s.
  assert.deepEqual(d, { direction: 'up', from: 2, to: 3, reason: '25 requests in flight per instance for 6 s' });
  assert.equal(decide(samples.slice(0, 3), { ...DEFAULT_AUTOSCALING, inflightOut: 20 }, state, 6_000), undefined);
});

test('unmeasured CPU decides nothing, and samples of another count do not count', () => {
  const unmeasured: LoadSample[] = Array.from({ length: 40 }, (_, k) => ({
    from: k * SAMPLE_MS,
    at: (k + 1) * SAMPLE_MS,
    instances: 2,
    queued: 0,
    inflight: 0,
  }));
  assert.equal(decide(unmeasured, DEFAULT_AUTOSCALING, { instances: 2, minInstances: 1, maxInstances: 4 }, 80_000), undefined);
  const atThree: LoadSample[] = unmeasured.map((s) => ({ ...s, instances: 3, cpuPercent: 100 }));
  assert.equal(decide(atThree, DEFAULT_AUTOSCALING, { instances: 2, minInstances: 1, maxInstances: 4 }, 80_000), undefined);
});

test('signals taking turns still make a saturated run, told with the last figures', () => {
  const samples: LoadSample[] = [0, 1, 2, 3].map((k) => ({
    from: k * SAMPLE_MS,
    at: (k + 1) * SAMPLE_MS,
    instances: 1,
    cpuPercent: k === 1 ? 30 : 90,
    queued: 0,
    inflight: k === 1 ? 6 : 1,
  }));
  const d = decide(samples, { ...DEFAULT_AUTOSCALING, inflightOut: 3 }, { instances: 1, minInstances: 1, maxInstances: 3 }, 8_000);
  assert.deepEqual(d, { direction: 'up', from: 1, to: 2, reason: '1 instance saturated for 8 s (last: CPU 90%, 1 in flight, 0 queued)' });
});

/** Samples of an app at `instances` from 0 to `untilMs`, with `requests(t)` sent to it in each interval. */
function idleSeries(instances: number, untilMs: number, requests: (t: number) => number | undefined): LoadSample[] {
  const samples: LoadSample[] = [];
  for (let t = SAMPLE_MS; t <= untilMs; t += SAMPLE_MS) {
    const count = requests(t);
    samples.push({
      from: t - SAMPLE_MS,
      at: t,
      instances,
      cpuPercent: 1,
      queued: 0,
      inflight: 0,
      ...(count === undefined ? {} : { requests: count }),
    });
  }
  return samples;
}

const zeroMin: ScalingState = { instances: 1, minInstances: 0, maxInstances: 2 };
const idle = { ...DEFAULT_AUTOSCALING, idleAfterMs: 20_000 };

test('scale to zero: no request for idle-after puts the app to sleep, from any count', () => {
  const samples = idleSeries(1, 40_000, (t) => (t <= 10_000 ? 3 : 0));
  // Requests until 10 s: idle from 10 s, so 20 s of it at 30 s, not before.
  assert.equal(
    decide(
      samples.filter((s) => s.at <= 28_000),
      idle,
      zeroMin,
      28_000,
    ),
    undefined,
  );
  const d = decide(
    samples.filter((s) => s.at <= 30_000),
    idle,
    zeroMin,
    30_000,
  );
  assert.deepEqual(d && [d.direction, d.from, d.to, d.reason], ['down', 1, 0, 'no request for 20 s']);
  const two = decide(
    idleSeries(2, 30_000, () => 0),
    idle,
    { ...zeroMin, instances: 2 },
    30_000,
  );
  assert.deepEqual(two && [two.from, two.to], [2, 0]);
  assert.match(
    decide(
      idleSeries(1, 15 * 60_000, () => 0),
      DEFAULT_AUTOSCALING,
      zeroMin,
      15 * 60_000,
    )!.reason,
    /^no request for 15 min$/,
  );
});

test('scale to zero: a single request, one in flight or queued, keeps it awake', () => {
  assert.equal(
    decide(
      idleSeries(1, 40_000, (t) => (t === 26_000 ? 1 : 0)),
      idle,
      zeroMin,
      40_000,
    ),
    undefined,
  );
  const inflight = idleSeries(1, 40_000, () => 0).map((s) => (s.at === 34_000 ? { ...s, inflight: 1 } : s));
  assert.equal(decide(inflight, idle, zeroMin, 40_000), undefined);
});

test('scale to zero: never with workers, never above a minimum of 1, never on uncounted requests', () => {
  const quiet = idleSeries(1, 60_000, () => 0);
  assert.equal(decide(quiet, idle, { ...zeroMin, hasWorkers: true }, 60_000), undefined);
  assert.equal(decide(quiet, idle, { ...zeroMin, minInstances: 1 }, 60_000), undefined);
  assert.equal(
    decide(
      idleSeries(1, 60_000, () => undefined),
      idle,
      zeroMin,
      60_000,
    ),
    undefined,
  );
  // With a minimum of 0, the low-load rule still stops at one instance: 0 is only the sleep.
  const low = idleSeries(2, 200_000, () => 5);
  const d = decide(low, idle, { ...zeroMin, instances: 2 }, 200_000);
  assert.deepEqual(d && [d.from, d.to], [2, 1]);
  assert.equal(
    decide(
      idleSeries(1, 200_000, () => 5),
      idle,
      zeroMin,
      200_000,
    ),
    undefined,
  );
});
