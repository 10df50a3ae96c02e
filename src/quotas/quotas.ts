import { DEFAULT_INSTANCE_FLAVOR, flavorNamed } from '../core/flavors.js';
import { NotFoundError } from '../core/errors.js';
import { rangesOf, workerRangeOf } from '../core/scaling-ranges.js';
import type { Store } from '../store/store.js';
import type { Org } from '../store/orgs.js';
import type { AppRow } from '../store/apps.js';
import { DEFAULT_QUOTAS, type QuotaLimits, type QuotaName, effectiveLimits, flavorAllowed } from './limits.js';
import { OrgsPerUserExceededError, QuotaExceededError } from './refusal.js';
import type { User } from '../store/users.js';

/** What an organisation holds now, in the units of its quotas. */
export interface QuotaUsage {
  apps: number;
  addons: number;
  instances: number;
  memory_bytes: number;
  /** The biggest instance flavour any of its apps uses. */
  max_flavor: string | null;
  /** Workers over all its instances: each instance runs its app's workers (each worker instance, for an app with a range of them). */
  workers: number;
  runs: number;
  domains: number;
  cron_jobs: number;
  drains: number;
  /** Each drain reserves the daemon's per-drain buffer size. */
  drain_buffer_bytes: number;
  webhooks: number;
  notify_emails: number;
  /** Manual backups kept now. */
  backups: number;
}

/** What the quotas need to know beyond the store and the organisations' limits. */
export interface QuotaOptions {
  /** Organisations one user may own (`slipway server --orgs-per-user`); administrators are not bound. */
  orgsPerUser?: number;
  /** The cron jobs of an app's serving release (none before its first deployment). */
  cronJobsOfApp?(appId: string): number;
  /** The disk each drain's buffer may take (the daemon's --drain-buffer-size). */
  drainBufferBytes?: number;
}

/** The buffer each drain reserves unless the daemon says otherwise (src/drains/drain-service.ts keeps it so). */
export const DEFAULT_DRAIN_BUFFER_RESERVE = 16 * 1024 * 1024;
/** Organisations a user may own unless the operator says otherwise: enough for work, test and a spare. */
export const DEFAULT_ORGS_PER_USER = 3;

/**
 * Quotas count the maxima of an app's ranges: what the autoscaler may reach without asking (a
 * fixed count is its own maximum). Its worker instances (a range of workers of their own) are
 * instances too, of the same flavour.
 */
const webInstancesOf = (app: AppRow) => rangesOf(app).maxInstances;
const workerInstancesOf = (app: AppRow) => workerRangeOf(app)?.max ?? 0;
const instancesOf = (app: AppRow) => webInstancesOf(app) + workerInstancesOf(app);
/** The instances each of which runs all the app's workers: its worker instances when it has a range of them, else every instance. */
const workerHostsOf = (app: AppRow) => workerRangeOf(app)?.max ?? webInstancesOf(app);
/** What a refusal says of an app's count when worker instances are part of it. */
const whichInstances = (web: number, workers: number) =>
  workers === 0 ? undefined : `${web} instance${web === 1 ? '' : 's'} and ${workers} worker instance${workers === 1 ? '' : 's'} at most`;
const flavorOf = (app: AppRow) => rangesOf(app).maxFlavor;

/**
 * The workers one instance of an app runs: its non-empty CC_WORKER_COMMAND and
 * CC_WORKER_COMMAND_<n> variables, as src/serving/workers.ts reads them.
 */
export function workersIn(env: Record<string, string>): number {
  return Object.entries(env).filter(([name, value]) => /^CC_WORKER_COMMAND(_\d+)?$/.test(name) && value.trim() !== '').length;
}
const memoryOf = (app: AppRow) => instancesOf(app) * flavorNamed(flavorOf(app)).memoryBytes;

/**
 * The one place quotas are enforced: the API asks before it creates or grows anything an
 * organisation owns, and refuses with the quota's name and the current use.
 */
export class Quotas {
  /** One-off runs open now, per organisation (they live only as long as the daemon). */
  private readonly openRuns = new Map<string, number>();

  constructor(
    private readonly store: Store,
    readonly defaults: QuotaLimits = DEFAULT_QUOTAS,
    private readonly sources: QuotaOptions = {},
  ) {}

  private get drainReserve(): number {
    return this.sources.drainBufferBytes ?? DEFAULT_DRAIN_BUFFER_RESERVE;
  }

  /** The organisation whose quotas something of `orgId` counts against. */
  org(orgId: string): Org {
    const org = this.store.orgs.byId(orgId);
    if (!org) throw new NotFoundError('The organisation no longer exists.');
    return org;
  }

  limitsOf(orgId: string): QuotaLimits {
    return effectiveLimits(this.defaults, this.store.orgQuotas.of(orgId));
  }

  usageOf(orgId: string): QuotaUsage {
    const apps = this.store.apps.listForOrg(orgId);
    let biggest: string | null = null;
    for (const app of apps) {
      const flavor = flavorNamed(flavorOf(app));
      if (!biggest || flavor.memoryBytes > flavorNamed(biggest).memoryBytes) biggest = flavor.name;
    }
    const drains = apps.reduce((sum, app) => sum + this.store.drains.ofApp(app.id).length, 0);
    return {
      apps: apps.length,
      addons: this.store.addons.listForOrg(orgId).length,
      instances: apps.reduce((sum, app) => sum + instancesOf(app), 0),
      memory_bytes: apps.reduce((sum, app) => sum + memoryOf(app), 0),
      max_flavor: biggest,
      workers: apps.reduce((sum, app) => sum + this.workersOfApp(app), 0),
      runs: this.openRuns.get(orgId) ?? 0,
      domains: apps.reduce((sum, app) => sum + this.store.domains.ofApp(app.id).length, 0),
      cron_jobs: apps.reduce((sum, app) => sum + (this.sources.cronJobsOfApp?.(app.id) ?? 0), 0),
      drains: drains,
      drain_buffer_bytes: drains * this.drainReserve,
      webhooks: apps.reduce((sum, app) => sum + this.store.webhooks.ofApp(app.id).length, 0),
      notify_emails: apps.reduce((sum, app) => sum + this.store.notifyEmails.ofApp(app.id).length, 0),
      backups: this.store.addonBackups.manualOfOrg(orgId),
    };
  }

  /** Before a new application: counts as one app of one instance of the default flavour. */
  checkNewApp(org: Org): void {
    const limits = this.limitsOf(org.id);
    const use = this.usageOf(org.id);
    this.count(org, 'apps', use.apps, 1, limits.apps);
    this.count(org, 'instances', use.instances, 1, limits.instances);
    this.count(org, 'memory_bytes', use.memory_bytes, flavorNamed(DEFAULT_INSTANCE_FLAVOR).memoryBytes, limits.memory_bytes);
  }

  checkNewAddon(org: Org): void {
    this.count(org, 'addons', this.usageOf(org.id).addons, 1, this.limitsOf(org.id).addons);
  }

  checkNewDomain(org: Org): void {
    this.count(org, 'domains', this.usageOf(org.id).domains, 1, this.limitsOf(org.id).domains);
  }

  get orgsPerUser(): number {
    return this.sources.orgsPerUser ?? DEFAULT_ORGS_PER_USER;
  }

  /**
   * Before a user creates an organisation: each one carries a full set of quotas, so without
   * this bound one user would hold any number of them. Administrators are not bound.
   */
  checkNewOrg(user: User): void {
    if (user.is_admin) return;
    const owned = this.store.orgs.listForUser(user.id).filter((org) => org.role === 'owner').length;
    if (owned + 1 <= this.orgsPerUser) return;
    throw new OrgsPerUserExceededError(user.name, owned, this.orgsPerUser);
  }

  /** Before a new drain: one more drain, and its buffer within the organisation's drain-buffer budget. */
  checkNewDrain(org: Org): void {
    const limits = this.limitsOf(org.id);
    const use = this.usageOf(org.id);
    this.count(org, 'drains', use.drains, 1, limits.drains);
    this.count(org, 'drain_buffer_bytes', use.drain_buffer_bytes, this.drainReserve, limits.drain_buffer_bytes);
  }

  checkNewWebhook(org: Org): void {
    this.count(org, 'webhooks', this.usageOf(org.id).webhooks, 1, this.limitsOf(org.id).webhooks);
  }

  checkNewNotifyEmail(org: Org): void {
    this.count(org, 'notify_emails', this.usageOf(org.id).notify_emails, 1, this.limitsOf(org.id).notify_emails);
  }

  /** Before `slipway addon backup`: scheduled and safety backups are the platform's own and never refused. */
  checkNewBackup(org: Org): void {
    this.count(org, 'backups', this.store.addonBackups.manualOfOrg(org.id), 1, this.limitsOf(org.id).backups);
  }

  /** Before a release with `jobs` cron jobs replaces the app's serving one. */
  checkCronJobs(org: Org, app: AppRow, jobs: number): void {
    const current = this.sources.cronJobsOfApp?.(app.id) ?? 0;
    this.count(org, 'cron_jobs', this.usageOf(org.id).cron_jobs, jobs - current, this.limitsOf(org.id).cron_jobs);
  }

  /**
   * Before scaling an app to `change` (its maximum count and flavour: a fixed value is its own
   * maximum): the flavour allowed, the organisation's totals within limits.
   */
  checkScale(org: Org, app: AppRow, change: { instances?: number; flavor?: string; workers?: number | null }): void {
    const limits = this.limitsOf(org.id);
    const use = this.usageOf(org.id);
    const flavor = change.flavor ?? flavorOf(app);
    if (change.flavor !== undefined && !flavorAllowed(flavor, limits.max_flavor)) {
      throw new QuotaExceededError({ org: org.name, quota: 'max_flavor', used: flavorNamed(flavor).name, limit: limits.max_flavor });
    }
    const web = change.instances ?? webInstancesOf(app);
    // A maximum of worker instances given (null: none, the workers beside each instance), or the app's.
    const workerInstances = change.workers === undefined ? workerInstancesOf(app) : (change.workers ?? 0);
    const instances = web + workerInstances;
    const note = whichInstances(web, workerInstances);
    this.count(org, 'instances', use.instances, instances - instancesOf(app), limits.instances, note);
    const memory = instances * flavorNamed(flavor).memoryBytes;
    this.count(org, 'memory_bytes', use.memory_bytes, memory - memoryOf(app), limits.memory_bytes, note);
    const perInstance = workersIn(this.store.env.asRecord(app.id));
    const hosts = workerInstances > 0 ? workerInstances : web;
    this.count(org, 'workers', use.workers, perInstance * hosts - this.workersOfApp(app), limits.workers);
  }

  /** Before an app's variables become `env`: its workers × its instances within the workers quota. */
  checkEnv(org: Org, app: AppRow, env: Record<string, string>): void {
    const after = workersIn(env) * workerHostsOf(app);
    this.count(org, 'workers', this.usageOf(org.id).workers, after - this.workersOfApp(app), this.limitsOf(org.id).workers);
  }

  private workersOfApp(app: AppRow): number {
    return workersIn(this.store.env.asRecord(app.id)) * workerHostsOf(app);
  }

  /** Counts a one-off run as open until the returned function is called (once). */
  startRun(org: Org): () => void {
    this.count(org, 'runs', this.openRuns.get(org.id) ?? 0, 1, this.limitsOf(org.id).runs);
    this.openRuns.set(org.id, (this.openRuns.get(org.id) ?? 0) + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const left = (this.openRuns.get(org.id) ?? 1) - 1;
      if (left > 0) this.openRuns.set(org.id, left);
      else this.openRuns.delete(org.id);
    };
  }

  /** Growing by `more` past `limit` is refused; shrinking, or staying, never is. */
  private count(org: Org, quota: Exclude<QuotaName, 'max_flavor'>, used: number, more: number, limit: number, note?: string): void {
    if (more <= 0 || used + more <= limit) return;
    throw new QuotaExceededError({
      org: org.name,
      quota,
      used,
      limit,
      ...(more > 1 ? { after: used + more } : {}),
      ...(note === undefined ? {} : { note }),
    });
  }
}
