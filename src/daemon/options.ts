import type { LogLimits } from '../logs/log-limits.js';
import { parseCidr } from '../network/egress-ranges.js';

export interface DaemonOptions {
  dataDir: string;
  listen: string;
  apiPort: number;
  sshPort: number;
  routerPort: number;
  /** The router's HTTPS port (HTTP/2 and HTTP/1.1, SNI); 0: no HTTPS listener. */
  httpsPort: number;
  /** CIDRs of proxies in front of slipway whose X-Forwarded-* headers are kept and extended. */
  trustedProxies: string[];
  /**
   * Non-public ranges (`--egress-allow`, IPv4 or IPv6) that sandboxes (IPv4 ones: the firewall's
   * EGRESS_BLOCKED) and the daemon's own clients (the egress guard: docs/security.md) may reach.
   */
  egressAllow?: string[];
  domain: string;
  /** Host name users reach this machine by (git URLs); defaults to the domain. */
  publicHost: string;
  /** IPv4 /16 network the app instances get their addresses from. */
  subnet: string;
  /** Shared toolchain cache (Node, npm, Bun, sbt...); may be shared by several daemons. */
  toolchainCacheDir: string;
  /** Range of the applications' own uids, `<first>-<last>` (default 2000000-2099999). */
  appUids?: string;
  /** Each app's disk budget in bytes unless `slipway scale --disk` set its own (default 2 GiB). */
  appDiskBudget?: number;
  /** Free bytes builds and backups leave on the data folder's disk and a local backup folder's (`--min-free-disk`; default 1 GiB, 0: no check). */
  minFreeDisk?: number;
  /** Each organisation's quotas unless an administrator set its own (default DEFAULT_QUOTAS in src/quotas/limits.ts). */
  defaultQuotas?: import('../quotas/limits.js').QuotaLimits;
  /** Organisations one user may own (`--orgs-per-user`; default DEFAULT_ORGS_PER_USER in src/quotas/quotas.ts); administrators are not bound. */
  orgsPerUser?: number;
  /** Built releases kept per app for rollbacks (default 5). */
  keptReleases?: number;
  /** Sizes and counts of log files kept (default DEFAULT_LOG_LIMITS in src/logs/log-limits.ts). */
  logLimits?: LogLimits;
  /** Where Prometheus metrics are also served without a token (`--metrics-listen`); absent: only on the API, for administrators. */
  metricsListen?: { host: string; port: number };
  /** Bytes of lines each log drain keeps on disk for a receiver that is down (`--drain-buffer-size`). */
  drainBufferBytes?: number;
  /** Where add-on backups go and when they are taken (`--backup-*`). */
  backups?: BackupOptions;
  /** Lay this platform backup (a backup folder, or a folder of them: the newest) out in the empty data folder first (`--restore-from`). */
  restoreFrom?: string;
  /** The daily whole-platform backup (`--platform-backup-to`, `--platform-backup-at`, `--platform-backup-keep`). */
  platformBackup?: import('./platform-backup-setup.js').PlatformBackupSchedule;
  /** The SMTP server notifications are mailed through (`--smtp-url`, `--smtp-from`); absent: no mail. */
  smtp?: { url: string; from: string };
  /** ACME directory and renewal checks (src/certificates). */
  certificates?: import('../certificates/certificate-options.js').CertificateOptions;
  /** Where instances run: sandboxes on this machine (default) or a Docker Swarm. */
  backend?: 'local' | 'swarm';
  swarm?: import('../instances/swarm/start.js').SwarmOptions;
}

export function parseBackend(value: string | undefined): 'local' | 'swarm' {
  if (value === undefined || value === 'local' || value === 'swarm') return value ?? 'local';
  throw new Error(`--backend must be local or swarm, not ${JSON.stringify(value)}.`);
}

export const DEFAULT_SUBNET = '10.77.0.0/16';

/**
 * Names of the bridge and namespaces follow the subnet, so two daemons on different subnets
 * (a test run beside a running platform) never touch each other's interfaces.
 */
export function networkNames(subnet: string): { bridgeName: string; namespacePrefix: string; cgroupRoot: string } {
  const match = /^10\.(\d{1,3})\.0\.0\/16$/.exec(subnet);
  if (!match || Number(match[1]) > 255) {
    throw new Error(`--subnet must be a 10.<n>.0.0/16 network (e.g. ${DEFAULT_SUBNET}), not ${JSON.stringify(subnet)}.`);
  }
  return { bridgeName: `slipway${match[1]}`, namespacePrefix: `sw${match[1]}`, cgroupRoot: `slipway${match[1]}` };
}

export const DEFAULT_API_PORT = 4040;
export const DEFAULT_SSH_PORT = 2222;
export const DEFAULT_ROUTER_PORT = 8000;
export const DEFAULT_HTTPS_PORT = 8443;
export const DEFAULT_DOMAIN = 'localhost';

export function parsePort(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`${flag} must be a port number between 0 and 65535, not ${JSON.stringify(value)}.`);
  }
  return port;
}

export function checkDomain(value: string): string {
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(value)) {
    throw new Error(`--domain must be a DNS name such as "localhost" or "apps.example.org", not ${JSON.stringify(value)}.`);
  }
  return value;
}

/** The `--egress-allow` ranges, each checked (an address inside a range names its start). */
export function parseEgressAllow(values: readonly string[] | undefined): string[] {
  return (values ?? []).map((cidr) => {
    try {
      return parseCidr(cidr).text;
    } catch (error) {
      throw new Error(`--egress-allow: ${(error as Error).message}`);
    }
  });
}

export interface BackupOptions {
  /** A folder (default: `<data-dir>-backups`, beside the data folder). */
  folder?: string;
  /** An S3-compatible object store instead of the folder, e.g. http://127.0.0.1:8333/bucket/prefix. */
  s3Url?: string;
  s3CredentialsFile?: string;
  /** Encrypts every backup with a key from this file. */
  keyFile?: string;
  /** HH:MM: the daily backup of every add-on without a schedule of its own. */
  at?: string;
  keepDays?: number;
  /** A download whose client reads nothing this long is ended (`--download-idle-timeout`; default 60 s). */
  downloadIdleMs?: number;
}
