/**
 * What the API answers, as the API, the CLI and the console all read it: one copy of each shape.
 * The API's view functions return these types, so a field added or renamed there shows up
 * (or fails to compile) in the CLI and the console. This room imports nothing: the console's
 * browser code compiles it too.
 */

/** An application (`GET /v1/apps/:app`, `GET /v1/apps`). */
export interface AppView {
  id: string;
  name: string;
  type: string;
  region: 'par' | 'mtl';
  org_id: string;
  org_name: string | null;
  created_at: string;
  /** `git+ssh://…/<app_id>.git`, to push to. */
  git_url: string;
  /** `<app_id>.<domain>`, the host the router always answers for it. */
  domain: string;
  /** Where the app answers: its favourite domain when it has one. */
  url: string;
  instances: number;
  flavor: string;
  flavor_memory_bytes: number;
  build_flavor: string;
  build_flavor_memory_bytes: number;
}

export type DeploymentState = 'WIP' | 'OK' | 'FAIL' | 'CANCELLED';

/** A deployment (`GET /v1/apps/:app/deployments`, and inside other answers). */
export interface DeploymentView {
  id: string;
  app_id: string;
  commit: string;
  state: DeploymentState;
  cause: string;
  /** The phase it is in, or the one that failed. */
  phase: 'queued' | 'receive' | 'build' | 'release' | 'run' | 'healthcheck' | 'done' | null;
  /** Why it failed or was cancelled. */
  message: string | null;
  created_at: string;
  finished_at: string | null;
  /** In a listing: its release is still on disk, so a rollback to it needs no rebuild. */
  release_kept?: boolean;
}

/** One instance of an app in `GET /v1/apps/:app/status`. */
/** What an instance is doing (the instance backends' states). */
export type InstanceStateView = 'starting' | 'running' | 'restarting' | 'stopping' | 'stopped' | 'crashed';

export interface InstanceView {
  id: string;
  number: number;
  address: string;
  state: InstanceStateView;
  restarts: number;
  memory_bytes: number | null;
  /**
   * docs/behaviour.md, Liveness: `replacing` while this instance, which stopped answering, waits
   * for its replacement; `replaced` on the instance that replaced one.
   */
  liveness: { state: 'replacing' | 'replaced'; reason: string; at: string } | null;
}

/** `GET /v1/apps/:app/status`. */
export interface AppStatusView {
  status: 'running' | 'stopped';
  /** The first serving instance (kept for clients from before scaling). */
  instance: { id: string; address: string; port: number; state: InstanceStateView; restarts: number; memory_bytes: number | null } | null;
  instances: InstanceView[];
  instance_count: number;
  /** Scale to zero: since when the app sleeps (no instance; its next request wakes it); null: awake. */
  asleep_since: string | null;
  release: { deployment_id: string; commit: string } | null;
  pushed_commit: string | null;
  deploying: DeploymentView[];
}

/**
 * One record of a log stream (NDJSON, one per line): a line of output, or the closing record
 * (`end: true`, with the deployment's final state and message for a deployment log).
 */
export interface LogEntry {
  time?: string;
  /** `out`, `err`, `system`, or a worker's name. */
  stream?: string;
  line?: string;
  end?: boolean;
  state?: string;
  message?: string | null;
}

/** A custom domain of an application (`GET /v1/apps/:app/domains`). */
export interface DomainView {
  fqdn: string;
  name: string;
  wildcard: boolean;
  favourite: boolean;
  created_at: string;
  certificate: { source: 'acme' | 'uploaded' | 'internal' | 'provisional'; not_after: string } | null;
  acme: { state: 'pending' | 'valid' | 'invalid'; error: string | null; failures: number; retry_after: string | null } | null;
  verification: { state: 'pending' | 'verified'; record: string; token: string | null; verified_at: string | null };
}

export interface DomainListingView {
  default: string;
  favourite: string;
  domains: DomainView[];
}

/** One command of a build plan, as an argv array (never a shell string). */
export interface PlanCommandView {
  label: string;
  argv: string[];
  cwd?: string;
  env?: Record<string, string>;
  /** The command as the user wrote it and where, when argv wraps it (the printed plan shows this). */
  written?: { command: string; source: string };
}

/** A build plan (`GET /v1/apps/:app/plan`): what a deployment of the commit would run. */
export interface PlanView {
  provider: string;
  toolchain: Array<{ name: string; version: string; reason: string }>;
  env: Record<string, string>;
  /** Generated files by path: a secret one's content is never shown. */
  files: Array<{ path: string; secret: boolean }>;
  build: PlanCommandView[];
  before_start: PlanCommandView[];
  start: PlanCommandView;
  cache_dirs: string[];
  warnings: string[];
  notes: string[];
}

/** An add-on (`GET /v1/addons`, `GET /v1/addons/:addon`). */
export interface AddonView {
  id: string;
  name: string;
  provider: string;
  org_id: string;
  org_name: string | null;
  created_at: string;
  /** Ids of the applications linked to it. */
  linked_apps: string[];
  /** An FS bucket's host value, size used against size (null: not mounted now) and where each linked app sees it. */
  bucket?: {
    host: string;
    size_bytes: number;
    used_bytes: number | null;
    mounts: Array<{ app_id: string; path: string }>;
    /** An exclusive volume: one instance of one application mounts it at a time. */
    exclusive: boolean;
  };
}

/** A backup of an add-on (`GET /v1/addons/:addon/backups`): it counts once a restore of it passed. */
export interface AddonBackupView {
  id: string;
  addon_id: string;
  kind: 'scheduled' | 'manual' | 'safety';
  created_at: string;
  finished_at: string;
  size_bytes: number;
  verification: 'pending' | 'verified' | 'failed';
  /** What the restore test found, or why it failed. */
  verification_detail: string;
  verified_at: string | null;
  /** What the restore test compares: rows per table. */
  counts: Record<string, number>;
}

/** An add-on's backups, failed verifications first, then newest first; the restore window; the schedule. */
export interface AddonBackupsView {
  backups: AddonBackupView[];
  window: { from: string; to: string } | null;
  schedule: { at: string; keep_days: number };
}

/** How an app is scaled (`GET /v1/apps/:app/scale`). */
export interface ScaleView {
  instances: number;
  flavor: string;
  memory_bytes: number;
  build_flavor: string;
  build_memory_bytes: number;
  /** The app's disk budget: its repository, builds, caches and kept releases (`scale --disk`). */
  disk_budget_bytes: number;
  /** The range the autoscaler keeps the count in (min = max: a fixed count). */
  min_instances: number;
  max_instances: number;
  /** The range of instance flavours. */
  min_flavor: string;
  max_flavor: string;
  /** The autoscaler's settings for the app, as `--autoscaling` reads them. */
  autoscaling: string;
  /** With a minimum of 0: since when the app sleeps (its instances stopped for lack of requests); null: awake. */
  asleep_since: string | null;
  /** False when the minimum is 0 but the app never sleeps (it has workers, which run in its instances). */
  sleeps?: boolean;
  /**
   * The range of the app's worker instances, their count stored and those running now (ids and
   * states); null: no range, its workers run beside each instance.
   */
  workers: WorkerScaleView | null;
  /** The autoscaler's latest decisions, newest first. */
  decisions: ScalingDecisionView[];
}

/** The app's worker instances, when its workers have a range of their own. */
export interface WorkerScaleView {
  min: number;
  max: number;
  /** The count the autoscaler chose (or a person's --workers). */
  count: number;
  /** The worker instances running now. */
  running: Array<{ id: string; state: InstanceStateView }>;
}

/** One decision of the autoscaler. */
export interface ScalingDecisionView {
  at: string;
  direction: 'up' | 'down';
  /** The instance count before and after (the same for a change of flavour). */
  from: number;
  to: number;
  /** A change of flavour: the flavour before and after (null for a change of count). */
  from_flavor: string | null;
  to_flavor: string | null;
  /** "CPU 85% of 3 instances for 8 s". */
  reason: string;
  outcome: 'done' | 'failed';
  /** Which count changed: the instances', or the worker instances' (a range of workers of their own). */
  target: 'instances' | 'workers';
}

/** One app's disk use, in `slipway system status`. */
export interface AppDiskView {
  app_id: string;
  app_name: string;
  used_bytes: number | null;
  budget_bytes: number;
}

/** One variable. */
export interface EnvVarView {
  name: string;
  value: string;
}

/** Variables from one source: the application itself, an add-on, a linked application. */
export interface EnvSectionView {
  source: string;
  env: EnvVarView[];
}

/** One run of a cron job, or a run skipped or missed (`GET /v1/apps/:app/cron`). */
export interface CronRunView {
  /** The schedule time it was for (UTC). */
  scheduled_for: string;
  outcome: 'running' | 'succeeded' | 'failed' | 'timed-out' | 'killed' | 'skipped' | 'missed';
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  exit_code: number | null;
  detail: string | null;
}

/** A job of the serving release's `clevercloud/cron.json`, with its runs. */
export interface CronJobView {
  /** `cron-<n>`: what its lines in the app's log are marked with. */
  name: string;
  line: number;
  schedule: string;
  command: string;
  /** Null while the app is stopped. */
  next_run: string | null;
  running: boolean;
  /** The newest run that started (skipped and missed ones aside). */
  last_run: CronRunView | null;
  /** Newest first: runs, skips and missed runs. */
  recent: CronRunView[];
}
