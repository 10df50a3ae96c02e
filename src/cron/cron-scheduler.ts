import type { Store } from '../store/store.js';
import type { AppRow } from '../store/apps.js';
import type { CronOutcome, CronRunRow } from '../store/cron-runs.js';
import type { PlatformEventPublisher } from '../core/platform-events.js';
import type { CronJobView, CronRunView } from '../shared/api-types.js';
import { runArgv, type CronJobSpec } from './cron-file.js';
import { dueTimes, minuteOf, nextTime } from './schedule.js';
import { cronTimeoutMs } from './cron-timeout.js';
import { OutputLines } from './output-lines.js';

/** The serving release of an app as the scheduler needs it. */
export interface CronRelease {
  releaseDir: string;
  jobs: readonly CronJobSpec[];
  /** False once the app was stopped (`slipway stop`): its jobs do not run. */
  running: boolean;
}

/** A started run: the one-off sandbox of the release it runs in. */
export interface CronRunHandle {
  readonly done: Promise<{ exitCode: number | null; signal: string | null; outOfMemory: boolean }>;
  signal(signal: 'SIGKILL'): Promise<void>;
  readonly stdin?: NodeJS.WritableStream;
}

export interface CronSchedulerOptions {
  store: Store;
  releaseOf(appId: string): CronRelease | undefined;
  /** Starts a command in a fresh sandbox of the app's current release, with its variables and limits. */
  startRun(app: AppRow, argv: string[], onData: (stream: 'out' | 'err', chunk: Buffer) => void): Promise<CronRunHandle>;
  appVars(appId: string): Record<string, string>;
  /** The app's log. */
  appLog(appId: string, stream: string, line: string): void;
  events: PlatformEventPublisher;
  log(line: string): void;
  now?(): number;
}

interface ActiveRun {
  appId: string;
  runId: number;
  startedAt: number;
  handle?: CronRunHandle;
  /** Settles once the run's end is recorded. */
  ended?: Promise<void>;
}

const hhmm = (time: Date | string) => new Date(time).toISOString().slice(11, 16);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * Runs every app's cron jobs from the daemon, once per schedule time for the app whatever its
 * number of instances (docs/behaviour.md, Cron jobs). Each minute it looks at each app's serving
 * release: a job due then starts in a one-off sandbox of that release, unless its previous run
 * still goes (the skip is logged); schedule times that passed while no daemon ran are told as
 * missed. What each job reached and its runs are kept in the store, so a restart knows.
 */
export class CronScheduler {
  private readonly active = new Map<string, ActiveRun>();
  /** Apps being deleted: none of their jobs starts any more. */
  private readonly ending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly o: CronSchedulerOptions) {}

  private now(): number {
    return this.o.now?.() ?? Date.now();
  }

  /** Settles what the last daemon left, handles the current minute, then ticks every minute. */
  start(): void {
    this.settleInterrupted();
    this.tickSafely(minuteOf(this.now()));
    this.scheduleNextTick();
  }

  /** The daemon stops: no new run; the runs still going are killed (the next start records them). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await Promise.all([...this.active.values()].map((run) => run.handle?.signal('SIGKILL').catch(() => undefined)));
  }

  /**
   * The app is being deleted: none of its jobs starts any more and the runs going are killed
   * (recorded as killed, without a `cron.failed`); resolves once they ended. `resume` undoes it
   * when the deletion failed.
   */
  async endRunsOf(appId: string): Promise<void> {
    this.ending.add(appId);
    const runs = [...this.active.values()].filter((run) => run.appId === appId);
    await Promise.all(runs.map((run) => run.handle?.signal('SIGKILL').catch(() => undefined)));
    await Promise.all(runs.map((run) => run.ended));
  }

  resume(appId: string): void {
    this.ending.delete(appId);
  }

  private scheduleNextTick(): void {
    if (this.stopped) return;
    const now = this.now();
    // A little past the minute: a timer firing a hair early must not see the last minute again.
    const delay = 60_000 - (now % 60_000) + 250;
    this.timer = setTimeout(() => {
      this.tickSafely(minuteOf(this.now()));
      this.scheduleNextTick();
    }, delay);
    this.timer.unref();
  }

  private tickSafely(minute: Date): void {
    try {
      this.tick(minute);
    } catch (error) {
      this.o.log(`Cron: the check of ${minute.toISOString()} failed: ${(error as Error).stack}`);
    }
  }

  /** Handles one schedule minute for every app: runs what is due, tells what was missed. */
  tick(minute: Date): void {
    if (this.stopped) return;
    for (const app of this.o.store.apps.all()) {
      if (this.ending.has(app.id)) continue;
      let release: CronRelease | undefined;
      try {
        release = this.o.releaseOf(app.id);
      } catch (error) {
        this.o.log(`Cron: the release of ${app.id} could not be read: ${(error as Error).message}`);
        continue;
      }
      const jobs = release?.jobs ?? [];
      this.o.store.cron.keepOnly(
        app.id,
        jobs.map((job) => job.key),
      );
      for (const job of jobs) this.tickJob(app, release!, job, minute);
    }
  }

  private tickJob(app: AppRow, release: CronRelease, job: CronJobSpec, minute: Date): void {
    const { store } = this.o;
    const minuteIso = minute.toISOString();
    // A job seen for the first time starts being handled now: nothing before it was missed.
    const checked = store.cron.checkedUntil(app.id, job.key) ?? new Date(minute.getTime() - 60_000).toISOString();
    if (checked >= minuteIso) return;
    store.cron.setCheckedUntil(app.id, job.key, minuteIso);
    // A stopped app's jobs do not run, and a time that passed while it was stopped is not missed.
    if (!release.running) return;
    const due = dueTimes(job.schedule, new Date(checked), minute, 1);
    const dueNow = nextTime(job.schedule, new Date(minute.getTime() - 1)).getTime() === minute.getTime();
    const missed = due.count - (dueNow ? 1 : 0);
    if (missed > 0) this.recordMissed(app, job, due.times[0]!, minute, missed);
    if (dueNow) void this.run(app, release, job, minute);
  }

  private recordMissed(app: AppRow, job: CronJobSpec, first: Date, minute: Date, count: number): void {
    const detail =
      count === 1
        ? `the run due at ${first.toISOString()} was missed: slipway was not running then`
        : `${count} runs due from ${first.toISOString()} to before ${minute.toISOString()} were missed: slipway was not running then`;
    this.o.store.cron.add({
      app_id: app.id,
      job_key: job.key,
      job_name: job.name,
      scheduled_for: first.toISOString(),
      outcome: 'missed',
      started_at: null,
      finished_at: null,
      duration_ms: null,
      exit_code: null,
      detail,
    });
    this.o.appLog(app.id, 'system', `[${job.name}] ${detail[0]!.toUpperCase()}${detail.slice(1)}.`);
    this.o.events.publish({
      type: 'cron.missed',
      appId: app.id,
      summary: `Cron job ${job.name} of ${app.name}: ${detail}`,
      details: { job: job.name, line: job.line, schedule: job.schedule, missed: count, first_missed_at: first.toISOString() },
    });
  }

  private run(app: AppRow, release: CronRelease, job: CronJobSpec, minute: Date): Promise<void> {
    const ended = this.runNow(app, release, job, minute);
    const active = this.active.get(`${app.id}/${job.key}`);
    if (active && !active.ended) active.ended = ended;
    return ended;
  }

  private async runNow(app: AppRow, release: CronRelease, job: CronJobSpec, minute: Date): Promise<void> {
    const { store } = this.o;
    const id = `${app.id}/${job.key}`;
    const previous = this.active.get(id);
    const scheduled = minute.toISOString();
    const mark = (line: string) => this.o.appLog(app.id, 'system', `[${job.name}] ${line}`);
    if (previous) {
      const detail = `skipped: the run started at ${new Date(previous.startedAt).toISOString()} is still going`;
      store.cron.add({
        app_id: app.id,
        job_key: job.key,
        job_name: job.name,
        scheduled_for: scheduled,
        outcome: 'skipped',
        started_at: null,
        finished_at: null,
        duration_ms: null,
        exit_code: null,
        detail,
      });
      mark(`The run due at ${hhmm(minute)} UTC was ${detail}.`);
      return;
    }
    const { ms: timeoutMs, problem } = cronTimeoutMs(this.o.appVars(app.id));
    const startedAt = this.now();
    const runId = store.cron.add({
      app_id: app.id,
      job_key: job.key,
      job_name: job.name,
      scheduled_for: scheduled,
      outcome: 'running',
      started_at: new Date(startedAt).toISOString(),
      finished_at: null,
      duration_ms: null,
      exit_code: null,
      detail: null,
    });
    const active: ActiveRun = { appId: app.id, runId, startedAt };
    this.active.set(id, active);
    if (problem) mark(problem);
    mark(`Run due at ${hhmm(minute)} UTC started (time limit ${timeoutMs / 1000} s): ${job.command}`);
    const output = new OutputLines((stream, line) => this.o.appLog(app.id, stream, `[${job.name}] ${line}`));
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    let exit: { exitCode: number | null; signal: string | null; outOfMemory: boolean; startError?: string };
    try {
      const handle = await this.o.startRun(app, runArgv(job.command, release.releaseDir), (stream, chunk) => output.push(stream, chunk));
      active.handle = handle;
      // Nothing is typed into a cron job: a command reading its input gets the end at once.
      handle.stdin?.end();
      if (this.stopped || this.ending.has(app.id)) void handle.signal('SIGKILL').catch(() => undefined);
      timer = setTimeout(() => {
        timedOut = true;
        void handle.signal('SIGKILL').catch(() => undefined);
      }, timeoutMs);
      // The daemon's servers keep it alive; a run going on must not keep a stopping process up.
      timer.unref();
      exit = await handle.done;
    } catch (error) {
      exit = { exitCode: null, signal: null, outOfMemory: false, startError: (error as Error).message };
    } finally {
      clearTimeout(timer);
      output.end();
    }
    this.active.delete(id);
    // Killed by the daemon's own stop: the next daemon records it (settleInterrupted).
    if (this.stopped && !exit.startError) return;
    // Killed because the app is being deleted: its runs go with it, nobody is to be told.
    if (this.ending.has(app.id)) {
      store.cron.finish(runId, {
        outcome: 'killed',
        finished_at: new Date(this.now()).toISOString(),
        duration_ms: Math.round(this.now() - startedAt),
        exit_code: exit.exitCode,
        detail: 'was killed: the application was deleted',
      });
      return;
    }
    const durationMs = Math.round(this.now() - startedAt);
    const outcome: CronOutcome = exit.startError
      ? 'failed'
      : timedOut
        ? 'timed-out'
        : exit.exitCode === 0
          ? 'succeeded'
          : exit.exitCode === null
            ? 'killed'
            : 'failed';
    const how = exit.startError
      ? `could not start: ${exit.startError}`
      : timedOut
        ? `was killed at its time limit of ${timeoutMs / 1000} s`
        : exit.outOfMemory
          ? 'was killed: out of memory (the limit of the app’s flavour)'
          : exit.exitCode !== null
            ? `exited with code ${exit.exitCode}`
            : `was killed by ${exit.signal ?? 'a signal'}`;
    const detail = `${how} after ${seconds(durationMs)}`;
    store.cron.finish(runId, {
      outcome,
      finished_at: new Date(this.now()).toISOString(),
      duration_ms: durationMs,
      exit_code: exit.exitCode,
      detail,
    });
    mark(`Run due at ${hhmm(minute)} UTC ${detail}.`);
    if (outcome !== 'succeeded') {
      this.o.events.publish({
        type: 'cron.failed',
        appId: app.id,
        summary: `Cron job ${job.name} of ${app.name} failed: the run due at ${hhmm(minute)} UTC ${detail}`,
        details: {
          job: job.name,
          line: job.line,
          schedule: job.schedule,
          scheduled_for: scheduled,
          outcome,
          exit_code: exit.exitCode,
          signal: exit.signal,
          duration_ms: durationMs,
        },
      });
    }
  }

  /** Runs the last daemon left going were killed with it: each is recorded and told as failed. */
  private settleInterrupted(): void {
    for (const row of this.o.store.cron.running()) {
      const app = this.o.store.apps.byId(row.app_id);
      const startedAt = Date.parse(row.started_at ?? row.scheduled_for);
      const finishedAt = this.now();
      const detail = 'was killed: slipway stopped during the run';
      this.o.store.cron.finish(row.id, {
        outcome: 'killed',
        finished_at: new Date(finishedAt).toISOString(),
        duration_ms: Math.max(0, finishedAt - startedAt),
        exit_code: null,
        detail,
      });
      if (!app) continue;
      this.o.appLog(app.id, 'system', `[${row.job_name}] The run due at ${hhmm(row.scheduled_for)} UTC ${detail}.`);
      this.o.events.publish({
        type: 'cron.failed',
        appId: app.id,
        summary: `Cron job ${row.job_name} of ${app.name} failed: the run due at ${hhmm(row.scheduled_for)} UTC ${detail}`,
        details: { job: row.job_name, scheduled_for: row.scheduled_for, outcome: 'killed', exit_code: null },
      });
    }
  }

  /** The app's jobs as `slipway cron` and the console show them; empty without a release or jobs. */
  jobsOf(appId: string): CronJobView[] {
    const release = this.o.releaseOf(appId);
    if (!release) return [];
    const now = new Date(this.now());
    return release.jobs.map((job) => {
      const last = this.o.store.cron.lastRun(appId, job.key);
      return {
        name: job.name,
        line: job.line,
        schedule: job.schedule,
        command: job.command,
        next_run: release.running ? nextTime(job.schedule, now).toISOString() : null,
        running: this.active.has(`${appId}/${job.key}`),
        last_run: last ? runView(last) : null,
        recent: this.o.store.cron.recent(appId, job.key, 10).map(runView),
      };
    });
  }
}

function runView(row: CronRunRow): CronRunView {
  return {
    scheduled_for: row.scheduled_for,
    outcome: row.outcome,
    started_at: row.started_at,
    finished_at: row.finished_at,
    duration_ms: row.duration_ms,
    exit_code: row.exit_code,
    detail: row.detail,
  };
}
