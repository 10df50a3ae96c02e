import type { Instance } from '../instances/backend.js';
import type { AppRow } from '../store/apps.js';
import type { Store } from '../store/store.js';
import type { ServingTable } from './serving-table.js';
import type { LogHub } from '../logs/log-hub.js';
import type { PathResult } from '../healthcheck/health-check.js';
import { healthCheckPaths } from '../healthcheck/health-check-paths.js';
import { type LivenessSettings, livenessSettings } from '../healthcheck/liveness-settings.js';
import { describeLivenessFailure, formatSeconds, probeLiveness } from '../healthcheck/liveness-probe.js';
import { makeRedactor, secretValues } from '../core/redact.js';
import { type BackoffPolicy, RestartBackoff } from '../executor/restart-backoff.js';

/**
 * docs/behaviour.md, Liveness: the wait before an instance number is replaced again, so that an
 * instance that passes its health check and then keeps failing its liveness checks costs a few
 * starts a minute at most. Each replacement (or failed try) of the same number doubles it, from
 * 5 s up to 60 s; once an instance served healthy for 5 minutes it starts at 5 s again.
 */
export const REPLACEMENT_BACKOFF: Readonly<BackoffPolicy> = { initialMs: 5000, maxMs: 60_000, resetAfterMs: 5 * 60_000 };

/** What the monitor reads and changes of AppRuntime's table: the serving instances, the router. */
export type LivenessTable = Pick<ServingTable, 'servingInstances' | 'withdraw'>;

/** What replaces a stuck instance (AppRuntime). */
export interface InstanceReplacer {
  /**
   * Starts a new instance in the stuck one's place (same number, same release), health-checks
   * it, routes to it and stops the stuck one. Undefined when the stuck one left service
   * meanwhile; throws when the new one could not start or failed its health check.
   */
  replaceInstance(app: AppRow, stuck: Instance, log: (line: string) => void, cancel: AbortSignal): Promise<Instance | undefined>;
}

export interface LivenessMonitorOptions {
  table: LivenessTable;
  replacer: InstanceReplacer;
  store: Store;
  logs: LogHub;
  /** Told of each instance replaced (`slipway_instance_replacements_total`). */
  onReplaced?(appId: string): void;
  /** The daemon's own log. */
  log(line: string): void;
  /** How often the monitor looks for checks and retries that are due. */
  tickMs?: number;
  /**
   * After a crash restart, how long failed checks do not count until the app answers again:
   * it is booting (the deployment's boot deadline).
   */
  bootGraceMs?: number;
  probe?: (address: string, port: number, paths: readonly string[], timeoutMs: number) => Promise<PathResult | undefined>;
  /** The wait between replacements of the same instance number (REPLACEMENT_BACKOFF). */
  replacementBackoff?: BackoffPolicy;
}

/** What `slipway status` says of an instance: being replaced, or the replacement of a stuck one. */
export interface LivenessNote {
  state: 'replacing' | 'replaced';
  /** "did not answer GET / for 12 s" */
  reason: string;
  /** When it was taken out of the router (replacing), or when it took the stuck one's place (replaced). */
  at: string;
}

interface Watch {
  appId: string;
  settings: LivenessSettings;
  paths: string[];
  failures: number;
  /** When the first of the failed checks in a row started. */
  failingSince: number;
  nextCheckAt: number;
  probing: boolean;
  restarts: number;
  /** After a crash restart: failures count only once it answered or this time passed. */
  bootingUntil: number;
  /** When the monitor first saw it serving. */
  since: number;
}

/** The pace of replacements of one instance number of an app. */
interface Pacing {
  backoff: RestartBackoff;
  /** No replacement of this number starts before this time. */
  notBefore: number;
}

interface Episode {
  appId: string;
  stuck: Instance;
  number: number;
  reason: string;
  intervalMs: number;
  /** The activity record of the replacement (a deployment row, listed by `slipway activity`). */
  deploymentId: string;
  nextAttemptAt: number;
  attempt: Promise<void> | undefined;
  tries: number;
  /** How long the stuck instance served before its checks began failing (resets the back-off). */
  healthyMs: number;
  /** Aborted when the daemon stops or the app is deleted: the try under way ends. */
  cancel: AbortController;
}

/**
 * docs/behaviour.md, Liveness: checks every serving instance's health-check paths at an
 * interval; an instance that fails the configured number of checks in a row leaves the router
 * at once (unless no other instance of the app answers) and is replaced by a new instance of the
 * same number and release, which must pass the health check first. A replacement that fails is
 * tried again an interval later; the stuck instance keeps running meanwhile. Instances being deployed (not serving yet),
 * drained, stopping or restarting after a crash are left alone.
 */
export class LivenessMonitor {
  private readonly watches = new Map<Instance, Watch>();
  private readonly episodes = new Map<Instance, Episode>();
  private readonly notes = new WeakMap<Instance, LivenessNote>();
  /** Instances whose settings could not be read, said once each. */
  private readonly unreadable = new WeakSet<Instance>();
  private readonly stopping = new AbortController();
  private readonly pacing = new Map<string, Pacing>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly o: LivenessMonitorOptions) {}

  start(): void {
    this.timer ??= setInterval(() => this.tick(), this.o.tickMs ?? 250);
    this.timer.unref();
  }

  /** Stops checking; a replacement under way is cancelled (its new instance stops) and awaited. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.stopping.abort('the liveness monitor stopped');
    await Promise.all([...this.episodes.values()].map((e) => e.attempt));
    // Their activity records end now rather than stay in progress until the next daemon cancels them.
    for (const episode of [...this.episodes.values()]) this.endEpisode(episode, undefined);
  }

  /**
   * The app is being deleted: a replacement under way is cancelled (its new instance stops) and
   * awaited, and nothing of the app is checked or replaced any more.
   */
  async endApp(appId: string): Promise<void> {
    const mine = [...this.episodes.values()].filter((e) => e.appId === appId);
    for (const episode of mine) episode.cancel.abort('the application is being deleted');
    await Promise.all(mine.map((e) => e.attempt));
    for (const episode of mine) this.endEpisode(episode, undefined);
    for (const [instance, watch] of this.watches) if (watch.appId === appId) this.watches.delete(instance);
    for (const key of this.pacing.keys()) if (key.startsWith(`${appId}#`)) this.pacing.delete(key);
  }

  noteOf(instance: Instance): LivenessNote | undefined {
    return this.notes.get(instance);
  }

  /** One look at every serving instance: checks and retries that are due start; nothing waits. */
  tick(now = Date.now()): void {
    if (this.stopping.signal.aborted) return;
    const seen = new Set<Instance>();
    for (const [appId, instances] of this.o.table.servingInstances()) {
      for (const instance of instances) {
        seen.add(instance);
        const episode = this.episodes.get(instance);
        if (episode) this.retryIfDue(episode, now);
        else this.checkIfDue(appId, instance, now);
      }
    }
    for (const instance of this.watches.keys()) if (!seen.has(instance)) this.watches.delete(instance);
    for (const episode of this.episodes.values()) {
      if (!seen.has(episode.stuck) && !episode.attempt) this.endEpisode(episode, undefined);
    }
    // A pace nobody needed for longer than the reset is the initial one again anyway.
    const resetAfterMs = this.backoffPolicy().resetAfterMs;
    for (const [key, pace] of this.pacing) if (now - pace.notBefore > resetAfterMs) this.pacing.delete(key);
  }

  private backoffPolicy(): BackoffPolicy {
    return this.o.replacementBackoff ?? REPLACEMENT_BACKOFF;
  }

  private paceOf(appId: string, number: number): Pacing {
    const key = `${appId}#${number}`;
    let pace = this.pacing.get(key);
    if (!pace) {
      pace = { backoff: new RestartBackoff(this.backoffPolicy()), notBefore: 0 };
      this.pacing.set(key, pace);
    }
    return pace;
  }

  private watchOf(appId: string, instance: Instance, now: number): Watch | undefined {
    const known = this.watches.get(instance);
    if (known) return known;
    if (this.unreadable.has(instance)) return undefined;
    let settings: LivenessSettings;
    let paths: string[];
    try {
      settings = livenessSettings(instance.spec.env);
      paths = healthCheckPaths(instance.spec.env);
    } catch (error) {
      // Deployments refuse these values; an instance adopted with variables changed since can have them.
      this.unreadable.add(instance);
      this.appLog(appId, `Liveness checks of instance ${instance.spec.instanceNumber} are off: ${(error as Error).message}`);
      return undefined;
    }
    const watch: Watch = {
      appId,
      settings,
      paths,
      failures: 0,
      failingSince: 0,
      // A serving instance passed its health check (or was adopted serving): the first check is an interval away.
      nextCheckAt: now + settings.intervalMs,
      probing: false,
      restarts: instance.restarts(),
      bootingUntil: 0,
      since: now,
    };
    this.watches.set(instance, watch);
    return watch;
  }

  private checkIfDue(appId: string, instance: Instance, now: number): void {
    const watch = this.watchOf(appId, instance, now);
    if (!watch?.settings.enabled) return;
    if (instance.state() !== 'running') {
      // Crashed or restarting: its supervisor handles it. Stopping: it is leaving anyway.
      watch.failures = 0;
      return;
    }
    if (instance.restarts() !== watch.restarts) {
      watch.restarts = instance.restarts();
      watch.failures = 0;
      watch.bootingUntil = now + (this.o.bootGraceMs ?? 120_000);
    }
    if (watch.probing || now < watch.nextCheckAt) return;
    watch.probing = true;
    const started = now;
    const probe = this.o.probe ?? probeLiveness;
    void probe(instance.address, instance.port, watch.paths, watch.settings.timeoutMs)
      .then((failure) => this.checked(instance, watch, started, failure))
      .catch((error) => this.o.log(`Liveness check of ${instance.id}: ${(error as Error).message}`))
      .finally(() => {
        watch.probing = false;
        watch.nextCheckAt = Math.max(started + watch.settings.intervalMs, Date.now());
      });
  }

  private checked(instance: Instance, watch: Watch, started: number, failure: PathResult | undefined): void {
    // The instance left service (or the monitor stopped) while the check ran: its answer is moot.
    if (this.watches.get(instance) !== watch || this.stopping.signal.aborted || instance.state() !== 'running') return;
    const number = instance.spec.instanceNumber;
    if (!failure) {
      if (watch.failures > 0) this.appLog(watch.appId, `Liveness: instance ${number} answers again`);
      watch.failures = 0;
      watch.bootingUntil = 0;
      return;
    }
    if (Date.now() < watch.bootingUntil) return;
    if (watch.failures === 0) watch.failingSince = started;
    watch.failures++;
    const limit = watch.settings.failures;
    this.appLog(
      watch.appId,
      `Liveness: instance ${number} ${describeLivenessFailure(failure, watch.settings.timeoutMs)} (${watch.failures} of ${limit} failed checks in a row)`,
    );
    if (watch.failures < limit) return;
    this.watches.delete(instance);
    this.beginEpisode(watch, instance, `${describeLivenessFailure(failure)} for ${formatSeconds(Date.now() - watch.failingSince, true)}`);
  }

  private beginEpisode(watch: Watch, stuck: Instance, reason: string): void {
    const { store } = this.o;
    const number = stuck.spec.instanceNumber;
    const commit = store.deployments.byId(stuck.spec.deploymentId)?.commit_sha ?? '';
    const record = store.deployments.create({ appId: watch.appId, commit, cause: `instance ${number} stopped answering`, userId: null });
    store.deployments.setPhase(record.id, 'run');
    const now = Date.now();
    const episode: Episode = {
      appId: watch.appId,
      stuck,
      number,
      reason,
      intervalMs: watch.settings.intervalMs,
      deploymentId: record.id,
      // Replaced a moment ago (it flaps): the next replacement waits its turn.
      nextAttemptAt: this.pacing.get(`${watch.appId}#${number}`)?.notBefore ?? 0,
      attempt: undefined,
      tries: 0,
      healthyMs: Math.max(0, watch.failingSince - watch.since),
      cancel: new AbortController(),
    };
    this.episodes.set(stuck, episode);
    this.notes.set(stuck, { state: 'replacing', reason, at: new Date().toISOString() });
    // Out of the router at once when another instance answers and takes its requests. When none
    // does (one instance, or a checked path that fails on all of them, as one testing a database
    // that is down would), taking it out would only turn slow answers or errors into no answer
    // at all: it stays until its replacement passed the health check and the router switches.
    const others = this.answeringOthers(watch.appId, stuck);
    const wait = episode.nextAttemptAt - now;
    const starts =
      wait > 0
        ? `a replacement starts in ${formatSeconds(wait, true)} (back-off: instance ${number} was replaced a moment ago) (${record.id})`
        : `a replacement starts (${record.id})`;
    const line = others
      ? `Instance ${number} ${reason}: taken out of the router, ${starts}`
      : `Instance ${number} ${reason}: ${starts}; no other instance answers, so it stays in the router until then`;
    this.appLog(watch.appId, line);
    this.o.logs.append(record.id, 'system', line);
    if (!others) return this.retryIfDue(episode, now);
    void this.o.table
      .withdraw(watch.appId, stuck)
      .catch((error) => this.o.log(`Taking ${stuck.id} out of the router: ${(error as Error).message}`))
      .finally(() => this.retryIfDue(episode, Date.now()));
  }

  /** Whether another instance of the app serves and passed its last check. */
  private answeringOthers(appId: string, stuck: Instance): boolean {
    for (const [id, instances] of this.o.table.servingInstances()) {
      if (id !== appId) continue;
      return instances.some(
        (i) => i !== stuck && !this.episodes.has(i) && i.state() === 'running' && (this.watches.get(i)?.failures ?? 0) === 0,
      );
    }
    return false;
  }

  private retryIfDue(episode: Episode, now: number): void {
    if (episode.attempt || now < episode.nextAttemptAt || this.stopping.signal.aborted) return;
    const app = this.o.store.apps.byId(episode.appId);
    if (!app) return;
    if (episode.cancel.signal.aborted) return;
    episode.tries++;
    const cancel = AbortSignal.any([this.stopping.signal, episode.cancel.signal]);
    const redact = makeRedactor(secretValues(episode.stuck.spec.env));
    const log = (line: string) => this.o.logs.append(episode.deploymentId, 'system', redact(line));
    log(`==> [run] Replacing instance ${episode.number} (try ${episode.tries}): ${episode.reason}`);
    this.o.store.deployments.setPhase(episode.deploymentId, 'healthcheck');
    episode.attempt = this.o.replacer
      .replaceInstance(app, episode.stuck, log, cancel)
      .then(
        (fresh) => this.endEpisode(episode, fresh, fresh ? this.paced(episode) : undefined),
        (error) => {
          if (cancel.aborted) return this.endEpisode(episode, undefined);
          const why = (error as Error).message;
          const waitMs = this.paced(episode);
          const line = `The replacement of instance ${episode.number} failed: ${why} Next try in ${formatSeconds(waitMs, true)}.`;
          log(line);
          this.appLog(episode.appId, line);
          episode.nextAttemptAt = Date.now() + waitMs;
        },
      )
      .finally(() => {
        episode.attempt = undefined;
      });
  }

  /**
   * A try ended (replaced, or failed): how long until the next replacement of this number may
   * start. The first try of an episode counts the time the stuck instance served healthy, so a
   * long-lived instance starts the back-off over; a failed try counts none.
   */
  private paced(episode: Episode): number {
    const pace = this.paceOf(episode.appId, episode.number);
    const waitMs = pace.backoff.nextDelay(episode.tries === 1 ? episode.healthyMs : 0);
    pace.notBefore = Date.now() + waitMs;
    return waitMs;
  }

  /**
   * `fresh`: the instance that took the stuck one's place; undefined when it left service
   * otherwise. `waitMs`: how long until this number may be replaced again.
   */
  private endEpisode(episode: Episode, fresh: Instance | undefined, waitMs = 0): void {
    if (this.episodes.get(episode.stuck) !== episode) return;
    this.episodes.delete(episode.stuck);
    const { store, logs } = this.o;
    // A deleted app took its activity and logs with it: nothing to write back.
    if (!store.apps.byId(episode.appId)) return;
    if (fresh) {
      const line = `Instance ${episode.number} replaced after failing its liveness check (${episode.reason}); next replacement not before ${formatSeconds(waitMs, true)}`;
      this.notes.set(fresh, { state: 'replaced', reason: episode.reason, at: new Date().toISOString() });
      this.notes.delete(episode.stuck);
      logs.append(episode.deploymentId, 'system', `${line} (replaced by ${fresh.id})`);
      this.appLog(episode.appId, line);
      store.deployments.setPhase(episode.deploymentId, 'done');
      store.deployments.finish(episode.deploymentId, 'OK', line);
      this.o.onReplaced?.(episode.appId);
    } else {
      const line = this.stopping.signal.aborted
        ? `The replacement of instance ${episode.number} was cancelled: the daemon stopped.`
        : episode.cancel.signal.aborted
          ? `The replacement of instance ${episode.number} was cancelled: the application is being deleted.`
          : `Instance ${episode.number} left service before a replacement was ready (the application was stopped, scaled down or redeployed).`;
      logs.append(episode.deploymentId, 'system', line);
      store.deployments.finish(episode.deploymentId, 'CANCELLED', line);
    }
    logs.finish(episode.deploymentId);
  }

  private appLog(appId: string, line: string): void {
    this.o.logs.append(appId, 'system', line);
  }
}
