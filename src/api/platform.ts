import type { AppView } from '../shared/api-types.js';
import type { Store } from '../store/store.js';
import type { AppRow } from '../store/apps.js';
import { DEFAULT_BUILD_FLAVOR, DEFAULT_INSTANCE_FLAVOR, flavorNamed } from '../core/flavors.js';

/** Where users reach this slipway: used for git URLs, domains and app URLs. */
export interface PublicEndpoints {
  /** Host name users put in git remotes and browsers. */
  host: string;
  sshPort: number;
  routerPort: number;
  /** Apps get `<app_id>.<domain>`. */
  domain: string;
}

export function gitUrl(endpoints: PublicEndpoints, appId: string): string {
  return `git+ssh://git@${endpoints.host}:${endpoints.sshPort}/${appId}.git`;
}

export function appDomain(endpoints: PublicEndpoints, appId: string): string {
  return `${appId}.${endpoints.domain}`;
}

/** The address printed for an app: its favourite custom domain when it has one. */
export function appUrl(endpoints: PublicEndpoints, appId: string, favouriteDomain?: string): string {
  const port = endpoints.routerPort === 80 ? '' : `:${endpoints.routerPort}`;
  return `http://${favouriteDomain ?? appDomain(endpoints, appId)}${port}/`;
}

export function appView(endpoints: PublicEndpoints, app: AppRow, orgName?: string, favouriteDomain?: string): AppView {
  const flavor = flavorNamed(app.flavor ?? DEFAULT_INSTANCE_FLAVOR);
  const buildFlavor = flavorNamed(app.build_flavor ?? DEFAULT_BUILD_FLAVOR);
  return {
    id: app.id,
    name: app.name,
    type: app.type,
    region: app.region,
    org_id: app.org_id,
    org_name: orgName ?? null,
    created_at: app.created_at,
    git_url: gitUrl(endpoints, app.id),
    domain: appDomain(endpoints, app.id),
    url: appUrl(endpoints, app.id, favouriteDomain),
    instances: app.instances ?? 1,
    flavor: flavor.name,
    flavor_memory_bytes: flavor.memoryBytes,
    build_flavor: buildFlavor.name,
    build_flavor_memory_bytes: buildFlavor.memoryBytes,
  };
}

/** The deploy rooms the API drives; absent when only the control plane runs (unit tests). */
export interface DeploymentServices {
  deployer: import('../pipeline/deployer.js').Deployer;
  runtime: import('../serving/app-runtime.js').AppRuntime;
  logs: import('../logs/log-hub.js').LogHub;
  repos: import('../receiver/repo-store.js').RepoStore;
  /** Each app's filesystem and its disk budget (`scale --disk`, `system status`, `/metrics`). */
  disks?: import('../storage/app-disks.js').AppDisks;
  /** Starts a one-off command in a fresh sandbox of the app's current release. */
  runOneOff?(
    app: AppRow,
    argv: string[],
    onData: (stream: 'out' | 'err', chunk: Buffer) => void,
  ): Promise<import('../sandbox/sandbox-host.js').Sandbox>;
  /** The sandbox settings of the app's instances (for messages naming its limits). */
  sandboxOf?(app: AppRow): Promise<import('../sandbox/sandbox-identity.js').SandboxIdentity>;
  /** Deletes an application and everything of it but its add-ons. */
  removeApp?(app: AppRow): Promise<void>;
  /** Routes and certificates of custom domains. */
  domains?: import('../domains/domain-service.js').DomainService;
  /** Versions of the npm-fetched tools (`GET /v1/runtimes`). */
  catalog?: import('../providers/plan.js').VersionCatalog;
  /** `slipway system stop`: drains and stops the data plane; the daemon exits once it answered. */
  stopSystem?(): Promise<SystemStopReport>;
  /** `slipway system backup [--to]`: writes a whole-platform backup into that folder of the daemon's machine, or (undefined) to the backup store. */
  backupPlatform?(to: string | undefined): Promise<import('../backups/platform/platform-backup.js').PlatformBackupReport>;
  /** `slipway system rotate-secrets-key`: the store's secrets sealed with a new key, then its file replaced. */
  rotateSecretsKey?(): Promise<{ keyFile: string; oldKeyId: string; newKeyId: string; resealed: number }>;
}

/** What `slipway system stop` stopped. */
export interface SystemStopReport {
  apps: string[];
  instances: number;
  addon_servers: string[];
  router: string;
}

export interface ApiDependencies {
  store: Store;
  /** The daemon's `--app-disk-budget`, for apps without one of their own (default 2 GiB). */
  defaultDiskBudget?: number;
  /** The free space builds and backups leave (`--min-free-disk`) and the disks it watches; absent: not shown (unit tests). */
  reserve?: import('../storage/disk-reserve.js').DiskReserve;
  /** Per-organisation quotas and the daemon's defaults; absent: the built-in defaults. */
  quotas?: import('../quotas/quotas.js').Quotas;
  endpoints: PublicEndpoints;
  services?: DeploymentServices;
  /** Add-ons and their providers; absent when only the control plane runs (unit tests). */
  addons?: import('../addons/addon-manager.js').AddonManager;
  /** The add-ons' backups; absent when no backup store is configured (unit tests). */
  backups?: import('../backups/addon-backups.js').AddonBackups;
  /** Access logs, per-minute figures and Prometheus metrics; absent when no router runs (unit tests). */
  traffic?: import('../traffic/traffic-recorder.js').TrafficRecorder;
  /** Cron jobs of the apps' releases and their runs; absent when no scheduler runs (unit tests). */
  cron?: import('../cron/cron-scheduler.js').CronScheduler;
  /** Log drains' figures and the addresses a drain may not point at; absent in unit tests. */
  drains?: { service: import('../drains/drain-service.js').DrainService; forbidden: import('../network/egress-guard.js').EgressGuard };
  /** Where webhooks may point and whether mail can be sent; absent: no notification may be added (unit tests). */
  notifications?: { guard: import('../network/egress-guard.js').EgressGuard; smtp: boolean };
}
