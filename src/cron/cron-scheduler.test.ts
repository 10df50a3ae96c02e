import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Store } from '../store/store.js';
import type { PlatformEvent } from '../core/platform-events.js';
import { PlatformEvents } from '../notifications/platform-event-hub.js';
import { parseCronFile } from './cron-file.js';
import { CronScheduler, type CronRelease, type CronRunHandle } from './cron-scheduler.js';

type Exit = { exitCode: number | null; signal: string | null; outOfMemory: boolean };

/** A scheduler on an in-memory store, with runs the test ends by hand and a clock it sets. */
function setup(file: string, vars: Record<string, string> = {}) {
  const store = Store.open(':memory:');
  const org = store.orgs.create('acme');
  const app = store.apps.create({ orgId: org.id, name: 'shop', type: 'node', region: 'par' });
  const release: CronRelease = { releaseDir: '/data/releases/app/d1', jobs: parseCronFile(file), running: true };
  const events: PlatformEvent[] = [];
  const hub = new PlatformEvents();
  hub.subscribe((e) => events.push(e));
  const lines: string[] = [];
  const runs: Array<{ argv: string[]; end(exit: Exit): void; out(text: string): void; killed: string[] }> = [];
  let now = Date.parse('2026-11-26T12:00:10Z');
  const scheduler = new CronScheduler({
    store,
    events: hub,
    releaseOf: () => release,
    appVars: () => vars,
    appLog: (_app, stream, line) => lines.push(`${stream} ${line}`),
    log: (line) => lines.push(`daemon ${line}`),
    now: () => now,
    async startRun(_app, argv, onData): Promise<CronRunHandle> {
      let end!: (exit: Exit) => void;
      const done = new Promise<Exit>((resolve) => (end = resolve));
      const run = { argv, end, out: (text: string) => onData('out', Buffer.from(text)), killed: [] as string[] };
      runs.push(run);
      return {
        done,
        async signal(signal) {
          run.killed.push(signal);
          end({ exitCode: null, signal, outOfMemory: false });
        },
      };
    },
  });
  const tick = (iso: string) => {
    now = Date.parse(iso) + 100;
    scheduler.tick(new Date(iso));
  };
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return { store, app, release, events, lines, runs, scheduler, tick, settle, setNow: (iso: string) => (now = Date.parse(iso)) };
}

test('a job runs once per due minute, with $ROOT replaced, its output marked with its name', async () => {
  const s = setup('["*/2 * * * * $ROOT/bin/task"]');
  s.tick('2026-11-26T12:01:00Z');
  s.tick('2026-11-26T12:02:00Z');
  s.tick('2026-11-26T12:02:00Z');
  await s.settle();
  assert.equal(s.runs.length, 1, 'only 12:02 is due, and once');
  assert.deepEqual(s.runs[0]!.argv, ['/bin/sh', '-c', '/data/releases/app/d1/bin/task']);
  s.runs[0]!.out('hello\nwor');
  s.runs[0]!.out('ld');
  s.runs[0]!.end({ exitCode: 0, signal: null, outOfMemory: false });
  await s.settle();
  assert.ok(s.lines.includes('out [cron-1] hello'));
  assert.ok(s.lines.includes('out [cron-1] world'));
  const [job] = s.scheduler.jobsOf(s.app.id);
  assert.equal(job!.last_run?.outcome, 'succeeded');
  assert.equal(job!.last_run?.exit_code, 0);
  assert.equal(job!.next_run, '2026-11-26T12:04:00.000Z');
  assert.deepEqual(s.events, []);
});

test('a run still going when the job is due again is not started twice: the skip is logged', async () => {
  const s = setup('["* * * * * /bin/sleep 100"]');
  s.tick('2026-11-26T12:01:00Z');
  await s.settle();
  s.tick('2026-11-26T12:02:00Z');
  await s.settle();
  assert.equal(s.runs.length, 1);
  assert.ok(
    s.lines.some((l) => /^system \[cron-1\] The run due at 12:02 UTC was skipped: the run started at .* is still going\.$/.test(l)),
    s.lines.join('\n'),
  );
  assert.equal(s.scheduler.jobsOf(s.app.id)[0]!.recent[0]!.outcome, 'skipped');
  s.runs[0]!.end({ exitCode: 0, signal: null, outOfMemory: false });
  await s.settle();
  s.tick('2026-11-26T12:03:00Z');
  await s.settle();
  assert.equal(s.runs.length, 2, 'runs again once the previous run ended');
});

test('a failing run and a run killed at its time limit publish cron.failed', async (t) => {
  // The time limit is a timer: the test moves it on instead of waiting a second for it.
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const s = setup('["* * * * * /bin/false"]', { SLIPWAY_CRON_TIMEOUT: '1' });
  s.tick('2026-11-26T12:01:00Z');
  await s.settle();
  s.runs[0]!.end({ exitCode: 3, signal: null, outOfMemory: false });
  await s.settle();
  assert.equal(s.events.length, 1);
  assert.equal(s.events[0]!.type, 'cron.failed');
  assert.equal(s.events[0]!.details.exit_code, 3);
  assert.match(s.events[0]!.summary, /Cron job cron-1 of shop failed: the run due at 12:01 UTC exited with code 3/);
  s.tick('2026-11-26T12:02:00Z');
  await s.settle();
  t.mock.timers.tick(999);
  await s.settle();
  assert.deepEqual(s.runs[1]!.killed, [], 'not killed before its time limit');
  t.mock.timers.tick(1);
  await s.settle();
  assert.deepEqual(s.runs[1]!.killed, ['SIGKILL']);
  assert.equal(s.events.length, 2);
  assert.equal(s.events[1]!.details.outcome, 'timed-out');
  assert.equal(s.scheduler.jobsOf(s.app.id)[0]!.last_run?.outcome, 'timed-out');
});

test('schedule times that passed while no scheduler ran are told as missed, once', async () => {
  const s = setup('["* * * * * /bin/true", "0 0 1 1 * /bin/true"]');
  s.tick('2026-11-26T12:01:00Z');
  await s.settle();
  s.runs[0]!.end({ exitCode: 0, signal: null, outOfMemory: false });
  await s.settle();
  // The daemon was down from 12:01 to 12:05.
  s.tick('2026-11-26T12:05:00Z');
  await s.settle();
  const missed = s.events.filter((e) => e.type === 'cron.missed');
  assert.equal(missed.length, 1, 'the yearly job missed nothing');
  assert.equal(missed[0]!.details.missed, 3);
  assert.equal(missed[0]!.details.first_missed_at, '2026-11-26T12:02:00.000Z');
  assert.equal(s.runs.length, 2, '12:05 itself runs');
  assert.ok(s.lines.some((l) => l.includes('[cron-1] 3 runs due from 2026-11-26T12:02:00.000Z')));
});

test('a new job starts at the next due time; a stopped app runs nothing and misses nothing', async () => {
  const s = setup('["* * * * * /bin/true"]');
  s.release.running = false;
  s.tick('2026-11-26T12:01:00Z');
  s.tick('2026-11-26T12:04:00Z');
  await s.settle();
  assert.equal(s.runs.length, 0);
  assert.equal(s.scheduler.jobsOf(s.app.id)[0]!.next_run, null);
  s.release.running = true;
  s.tick('2026-11-26T12:05:00Z');
  await s.settle();
  assert.equal(s.runs.length, 1);
  assert.deepEqual(s.events, []);
});

test('a run the last daemon left going is recorded killed and told as failed at the next start', async () => {
  const s = setup('["* * * * * /bin/sleep 100"]');
  s.tick('2026-11-26T12:01:00Z');
  await s.settle();
  await s.scheduler.stop();
  await s.settle();
  assert.equal(s.events.length, 0, 'the stopping daemon records nothing');
  const next = new CronScheduler({
    store: s.store,
    events: (() => {
      const hub = new PlatformEvents();
      hub.subscribe((e) => s.events.push(e));
      return hub;
    })(),
    releaseOf: () => s.release,
    appVars: () => ({}),
    appLog: (_app, stream, line) => s.lines.push(`${stream} ${line}`),
    log: () => undefined,
    now: () => Date.parse('2026-11-26T12:01:30Z'),
    startRun: async () => ({ done: new Promise(() => undefined), signal: async () => undefined }),
  });
  next.start();
  await next.stop();
  assert.equal(s.events.length, 1);
  assert.equal(s.events[0]!.type, 'cron.failed');
  assert.equal(s.events[0]!.details.outcome, 'killed');
  assert.equal(next.jobsOf(s.app.id)[0]!.last_run?.outcome, 'killed');
});

test('jobs no longer in the release are forgotten', async () => {
  const s = setup('["* * * * * /bin/true", "0 * * * * /bin/date"]');
  s.tick('2026-11-26T12:00:00Z');
  await s.settle();
  assert.ok(s.store.cron.checkedUntil(s.app.id, s.release.jobs[1]!.key));
  s.release.jobs = parseCronFile('["* * * * * /bin/true"]');
  s.tick('2026-11-26T12:01:00Z');
  assert.equal(s.store.cron.checkedUntil(s.app.id, parseCronFile('["0 * * * * /bin/date"]')[0]!.key), undefined);
});

test('a daemon starting after a gap tells the runs missed meanwhile and runs the current minute', async () => {
  const s = setup('["* * * * * /bin/true"]');
  s.tick('2026-11-26T12:01:00Z');
  await s.settle();
  s.runs[0]!.end({ exitCode: 0, signal: null, outOfMemory: false });
  await s.settle();
  await s.scheduler.stop();
  const hub = new PlatformEvents();
  hub.subscribe((e) => s.events.push(e));
  let started = 0;
  const next = new CronScheduler({
    store: s.store,
    events: hub,
    releaseOf: () => s.release,
    appVars: () => ({}),
    appLog: (_app, stream, line) => s.lines.push(`${stream} ${line}`),
    log: () => undefined,
    now: () => Date.parse('2026-11-26T12:05:20Z'),
    startRun: async () => {
      started++;
      return { done: new Promise(() => undefined), signal: async () => undefined };
    },
  });
  next.start();
  await s.settle();
  await next.stop();
  assert.deepEqual(
    s.events.map((e) => [e.type, e.details.missed, e.details.first_missed_at]),
    [['cron.missed', 3, '2026-11-26T12:02:00.000Z']],
  );
  assert.equal(started, 1, '12:05, the minute the daemon started in, runs');
  assert.equal(next.jobsOf(s.app.id)[0]!.recent.find((r) => r.outcome === 'missed')?.scheduled_for, '2026-11-26T12:02:00.000Z');
});
