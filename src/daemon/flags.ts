import { isAbsolute, join, resolve } from 'node:path';
import type { OptionSpec, OptionValues } from '../cli/command.js';
import { parseDefaultQuotas } from '../quotas/limits.js';
import { resolveDataDir } from './data-dir.js';
import { parseUidRange } from '../sandbox/app-users.js';
import { DEFAULT_LOG_LIMITS, LOG_LIMIT_FLAGS, parseLogLimits, parseSize, type LogLimitFlag } from '../logs/log-limits.js';
import {
  checkDomain,
  DEFAULT_API_PORT,
  DEFAULT_DOMAIN,
  DEFAULT_HTTPS_PORT,
  DEFAULT_ROUTER_PORT,
  DEFAULT_SSH_PORT,
  DEFAULT_SUBNET,
  type DaemonOptions,
  networkNames,
  parseBackend,
  parseEgressAllow,
  parsePort,
} from './options.js';
import { DEFAULT_REGISTRY, DEFAULT_SWARM_SUBNET } from '../instances/swarm/swarm-defaults.js';
import { DEFAULT_REGISTRY_PASSWORD_FILE, DEFAULT_REGISTRY_USER } from '../instances/swarm/registry.js';
import { validateCidr } from '../router/validate.js';
import { parseListenAddress } from '../metrics/metrics-server.js';
import { parseDiskBudget, parseDiskSize } from '../core/disk-size.js';
import { checkKeepDays, checkTimeOfDay } from '../backups/schedule.js';
import {
  DEFAULT_PLATFORM_BACKUP_AT,
  DEFAULT_PLATFORM_BACKUP_KEEP,
  type PlatformBackupSchedule,
  STORE_TARGET,
} from './platform-backup-setup.js';
import { namesStoredBackup } from '../backups/platform/manifest.js';
import { addressOfSftpListen, parseBucketServerAddress } from '../instances/swarm/bucket-server-config.js';
import {
  parseAcmeDirectory,
  parseAcmeEmail,
  parseAcmeRetryBase,
  parseCheckInterval,
  parseDnsResolver,
} from '../certificates/certificate-options.js';

/*
 * The daemon's flags (`slipway server --help` and docs/cli-reference.md are drawn from
 * DAEMON_FLAGS), and how they become its options. Each flag says its default in its
 * description; an environment variable named there stands in for a flag not given. A wrong
 * value throws an Error whose message names the flag: `slipway server` shows it as a usage error.
 */

/** What each log flag sets, for --help (every flag of LOG_LIMIT_FLAGS must have a line). */
const mebibytes = (bytes: number) => `${bytes / (1024 * 1024)}M`;
const LOG_LIMIT_HELP: Record<LogLimitFlag, string> = {
  'log-max-size': `Size of an app's output file before it rotates (default ${mebibytes(DEFAULT_LOG_LIMITS.app.maxFileBytes)})`,
  'log-files': `Rotated files kept of an app's output, 0 to 50 (default ${DEFAULT_LOG_LIMITS.app.rotatedFiles})`,
  'deploy-log-max-size': `Size of a deployment's log file before it rotates (default ${mebibytes(DEFAULT_LOG_LIMITS.deployment.maxFileBytes)})`,
  'deploy-log-files': `Rotated files kept of a deployment's log, 0 to 50 (default ${DEFAULT_LOG_LIMITS.deployment.rotatedFiles})`,
  'deploy-logs-kept': `Logs of the newest deployments kept per app (default ${DEFAULT_LOG_LIMITS.deploymentLogsPerApp})`,
};

/** Every flag of `slipway server`, each with what it does and its default. */
export const DAEMON_FLAGS: OptionSpec = {
  'data-dir': {
    type: 'string',
    value: '<dir>',
    description: 'Where the store, repositories, releases and logs live (default $SLIPWAY_DATA_DIR, else /var/lib/slipway as root)',
  },
  listen: { type: 'string', value: '<addr>', description: 'Address the API, SSH and router listen on (default 127.0.0.1)' },
  'api-port': { type: 'string', value: '<port>', description: `Port of the API and web console (default ${DEFAULT_API_PORT})` },
  'ssh-port': { type: 'string', value: '<port>', description: `Port of the git SSH server (default ${DEFAULT_SSH_PORT})` },
  'router-port': { type: 'string', value: '<port>', description: `Port the router serves the apps on (default ${DEFAULT_ROUTER_PORT})` },
  'https-port': {
    type: 'string',
    value: '<port>',
    description: `Port the router serves the apps on over HTTPS, 0 for none (default ${DEFAULT_HTTPS_PORT})`,
  },
  'egress-allow': {
    type: 'string',
    multiple: true,
    value: '<cidr>',
    description:
      'A private, link-local or other non-public range (IPv4 or IPv6) that builds, apps and the daemon’s own clients (webhooks, drains, SMTP, S3 backups, ACME) may reach; they reach only the public internet otherwise (apps also the router and their add-ons); repeat for several',
  },
  'trusted-proxy': {
    type: 'string',
    multiple: true,
    value: '<cidr>',
    description: 'A proxy in front of slipway whose X-Forwarded-For/-Proto/-Host are kept and extended; repeat for several',
  },
  'acme-directory': {
    type: 'string',
    value: '<url>',
    description:
      'ACME directory to get certificates of public custom domains from (HTTP-01 through the router); without it the internal CA signs every name',
  },
  'acme-directory-ca': {
    type: 'string',
    value: '<file>',
    description: "PEM certificate to trust for the ACME directory's own HTTPS (a private ACME server)",
  },
  'acme-email': { type: 'string', value: '<email>', description: 'Contact address of the ACME account' },
  'certificate-check-interval': {
    type: 'string',
    value: '<seconds>',
    description: 'How often certificates are checked and renewed when a third of their lifetime is left (default 43200)',
  },
  'acme-retry-base': {
    type: 'string',
    value: '<seconds>',
    description: "The wait after a name's first failed ACME order, doubled at each next failure up to a day (default 900)",
  },
  'require-domain-verification': {
    type: 'boolean',
    description:
      'New custom domains wait, unrouted and without certificates, until the DNS TXT record _slipway-challenge.<domain> holds the token `domain add` printed',
  },
  'backup-folder': {
    type: 'string',
    value: '<path>',
    description: 'Where add-on backups go (default: beside the data folder, <data-dir>-backups); put it on another disk',
  },
  'backup-s3-url': {
    type: 'string',
    value: '<url>',
    description:
      'An S3-compatible store for the backups instead of the folder: http(s)://host:port/bucket/prefix (keys from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or --backup-s3-credentials-file)',
  },
  'backup-s3-credentials-file': {
    type: 'string',
    value: '<path>',
    description: 'The S3 access key and secret, in a file only root can read',
  },
  'backup-key-file': {
    type: 'string',
    value: '<path>',
    description: 'Encrypt every backup with the key in this file (32 bytes or more, readable by root only); keep a copy elsewhere',
  },
  'backup-at': { type: 'string', value: '<HH:MM>', description: 'When the daily backups run, local time (default 03:00)' },
  'backup-keep-days': { type: 'string', value: '<days>', description: 'How many days backups are kept, 1 to 90 (default 7)' },
  'download-idle-timeout': {
    type: 'string',
    value: '<seconds>',
    description: 'A backup download whose client reads nothing this long is ended, freeing its backup job, 1 to 3600 (default 60)',
  },
  'restore-from': {
    type: 'string',
    value: '<backup>',
    description:
      'Start on an empty data folder from a platform backup: `latest` or a backup name (slipway-platform-<time>) in the backup store given by --backup-folder/--backup-s3-url, or a folder path (one backup, or the folder holding them: the newest)',
  },
  'platform-backup-to': {
    type: 'string',
    value: '<store|folder>',
    description:
      'Write a whole-platform backup every day to the backup store (`store`: where add-on backups go) or into this absolute folder',
  },
  'platform-backup-at': {
    type: 'string',
    value: '<HH:MM>',
    description: `When the daily platform backup runs, local time (default ${DEFAULT_PLATFORM_BACKUP_AT})`,
  },
  'platform-backup-keep': {
    type: 'string',
    value: '<n>',
    description: `Platform backups kept in that folder, 1 to 365; older ones are removed (default ${DEFAULT_PLATFORM_BACKUP_KEEP})`,
  },
  'dns-resolver': {
    type: 'string',
    value: '<ip[:port]>',
    description:
      "DNS server the domain proofs and the names of webhooks, drains, SMTP, S3 and ACME are looked up at (default: the system's resolvers)",
  },
  domain: { type: 'string', value: '<domain>', description: `Apps get <app_id>.<domain> (default ${DEFAULT_DOMAIN})` },
  'public-host': { type: 'string', value: '<host>', description: 'Host name users put in git remotes (default: the domain)' },
  subnet: { type: 'string', value: '<cidr>', description: `The instances' network, a 10.<n>.0.0/16 (default ${DEFAULT_SUBNET})` },
  'toolchain-cache': {
    type: 'string',
    value: '<dir>',
    description:
      'Where fetched Node, Bun, package managers and sbt are kept (default $SLIPWAY_TOOLCHAIN_CACHE, else <data-dir>/cache/toolchains)',
  },
  'app-uids': {
    type: 'string',
    value: '<first-last>',
    description: 'Range of user ids given to apps (default $SLIPWAY_APP_UIDS, else 2000000-2099999)',
  },
  'drain-buffer-size': {
    type: 'string',
    value: '<size>',
    description:
      "Lines each log drain keeps on disk while its receiver is down, 1M to 1G (default 16M, $SLIPWAY_DRAIN_BUFFER_SIZE); when full, the oldest are dropped and counted; each drain reserves it against its organisation's drain-buffer quota",
  },
  'smtp-url': {
    type: 'string',
    value: '<url>',
    description:
      'SMTP server notifications are mailed through, smtp://user:pass@host:port or smtps://… (default $SLIPWAY_SMTP_URL, better for a password; else no mail)',
  },
  'smtp-from': {
    type: 'string',
    value: '<address>',
    description: 'Sender of notification mail (default $SLIPWAY_SMTP_FROM, else slipway@<domain>)',
  },
  'metrics-listen': {
    type: 'string',
    value: '<addr:port>',
    description:
      'Also serve Prometheus metrics at http://<addr:port>/metrics without a token, for a monitoring network (default $SLIPWAY_METRICS_LISTEN; else only /metrics on the API port, with an administrator token)',
  },
  'app-disk-budget': {
    type: 'string',
    value: '<size>',
    description:
      "Each app's disk budget (repository, builds, caches, kept releases), e.g. 512M or 4G; `slipway scale --disk` sets one app's (default $SLIPWAY_APP_DISK_BUDGET, else 2G)",
  },
  'min-free-disk': {
    type: 'string',
    value: '<size>',
    description:
      "Free space builds and backups leave on the data folder's disk (and a local backup folder's): below it they are refused, apps keep serving; 0 turns it off (default $SLIPWAY_MIN_FREE_DISK, else 1G)",
  },
  'default-quota': {
    type: 'string',
    value: '<quota=value,...>',
    description:
      "Each organisation's quotas unless `slipway org quota set` gives its own, e.g. apps=20,memory=64G,max-flavor=M (quotas: apps, addons, instances, memory, max-flavor, workers, runs, domains, cron-jobs, drains, drain-buffer, webhooks, notify-emails, backups; default $SLIPWAY_DEFAULT_QUOTA, else apps=100, addons=100, instances=200, memory=256G, max-flavor=XL, workers=100, runs=10, domains=200, cron-jobs=50, drains=10, drain-buffer=256M, webhooks=20, notify-emails=20, backups=20)",
  },
  'orgs-per-user': {
    type: 'string',
    value: '<n>',
    description: 'Organisations one user may own, 0 to 1000; administrators are not bound (default $SLIPWAY_ORGS_PER_USER, else 3)',
  },
  'kept-releases': {
    type: 'string',
    value: '<n>',
    description: 'Releases kept per app for rollbacks, 1 to 100 (default $SLIPWAY_KEPT_RELEASES, else 5)',
  },
  backend: {
    type: 'string',
    value: '<local|swarm>',
    description:
      'Where instances run: sandboxes on this machine, or services of the Docker Swarm this machine manages (default $SLIPWAY_BACKEND, else local)',
  },
  'docker-socket': {
    type: 'string',
    value: '<path>',
    description: 'Docker API of the swarm manager, with --backend swarm (default /var/run/docker.sock)',
  },
  registry: {
    type: 'string',
    value: '<host:port>',
    description: `Registry the swarm nodes pull release images from (default $SLIPWAY_REGISTRY, else ${DEFAULT_REGISTRY})`,
  },
  'registry-user': {
    type: 'string',
    value: '<name>',
    description: `User of the swarm registry (default $SLIPWAY_REGISTRY_USER, else ${DEFAULT_REGISTRY_USER})`,
  },
  'registry-password-file': {
    type: 'string',
    value: '<path>',
    description: `Root-only file holding the swarm registry's password (default $SLIPWAY_REGISTRY_PASSWORD_FILE, else ${DEFAULT_REGISTRY_PASSWORD_FILE})`,
  },
  'registry-ca': {
    type: 'string',
    value: '<path>',
    description: "CA of the swarm registry's TLS certificate (default the Docker engine's, /etc/docker/certs.d/<registry>/ca.crt)",
  },
  'swarm-subnet': { type: 'string', value: '<cidr>', description: `The swarm tasks' network, a /16 (default ${DEFAULT_SWARM_SUBNET})` },
  'swarm-bucket-server': {
    type: 'string',
    value: '<address>',
    description:
      'Where the swarm nodes mount FS buckets from (GlusterFS, ports 24007 and 49152-49651): an address of this machine they reach (default $SLIPWAY_SWARM_BUCKET_SERVER; none: apps naming buckets do not start on Swarm)',
  },
  'swarm-bucket-sftp': {
    type: 'string',
    value: '<address:port>',
    description: 'Older name of --swarm-bucket-server: its address is used, its port no longer',
  },
  ...Object.fromEntries(
    (Object.keys(LOG_LIMIT_FLAGS) as LogLimitFlag[]).map((flag) => [
      flag,
      { type: 'string' as const, value: '<n>', description: `${LOG_LIMIT_HELP[flag]}; $${LOG_LIMIT_FLAGS[flag]} when not given` },
    ]),
  ),
};

/** The daemon's options from the values of DAEMON_FLAGS (and the environment), each flag checked in turn. */
export function parseDaemonFlags(o: OptionValues, env: NodeJS.ProcessEnv): DaemonOptions {
  const text = (flag: string) => o[flag] as string | undefined;
  const list = (flag: string) => o[flag] as string[] | undefined;
  const domain = checkDomain(text('domain') ?? DEFAULT_DOMAIN);
  const dataDir = resolveDataDir(text('data-dir'), env);
  const subnet = text('subnet') ?? DEFAULT_SUBNET;
  networkNames(subnet);
  return {
    dataDir,
    subnet,
    toolchainCacheDir: text('toolchain-cache') ?? env.SLIPWAY_TOOLCHAIN_CACHE ?? join(dataDir, 'cache', 'toolchains'),
    listen: text('listen') ?? '127.0.0.1',
    apiPort: parsePort('--api-port', text('api-port'), DEFAULT_API_PORT),
    sshPort: parsePort('--ssh-port', text('ssh-port'), DEFAULT_SSH_PORT),
    routerPort: parsePort('--router-port', text('router-port'), DEFAULT_ROUTER_PORT),
    httpsPort: parsePort('--https-port', text('https-port'), DEFAULT_HTTPS_PORT),
    trustedProxies: (list('trusted-proxy') ?? []).map((cidr) => validateCidr(cidr, '--trusted-proxy')),
    egressAllow: parseEgressAllow(list('egress-allow')),
    domain,
    publicHost: text('public-host') ?? domain,
    appDiskBudget: parseDiskBudget(text('app-disk-budget') ?? env.SLIPWAY_APP_DISK_BUDGET ?? '2G'),
    minFreeDisk: parseDiskSize(text('min-free-disk') ?? env.SLIPWAY_MIN_FREE_DISK ?? '1G', '--min-free-disk'),
    defaultQuotas: parseDefaultQuotas(text('default-quota') ?? env.SLIPWAY_DEFAULT_QUOTA),
    orgsPerUser: parseOrgsPerUser(text('orgs-per-user') ?? env.SLIPWAY_ORGS_PER_USER),
    keptReleases: parseKeptReleases(text('kept-releases') ?? env.SLIPWAY_KEPT_RELEASES),
    appUids: parseUidRange(text('app-uids') ?? env.SLIPWAY_APP_UIDS) && (text('app-uids') ?? env.SLIPWAY_APP_UIDS),
    logLimits: parseLogLimits(o as Partial<Record<LogLimitFlag, string>>, env),
    metricsListen: metricsListen(text('metrics-listen') ?? env.SLIPWAY_METRICS_LISTEN),
    smtp: smtpSettings(text('smtp-url') ?? env.SLIPWAY_SMTP_URL, text('smtp-from') ?? env.SLIPWAY_SMTP_FROM, domain),
    backups: {
      folder: text('backup-folder'),
      s3Url: text('backup-s3-url') ?? env.SLIPWAY_BACKUP_S3_URL,
      s3CredentialsFile: text('backup-s3-credentials-file'),
      keyFile: text('backup-key-file') ?? env.SLIPWAY_BACKUP_KEY_FILE,
      at: o['backup-at'] === undefined ? undefined : checkTimeOfDay(text('backup-at')!, '--backup-at'),
      keepDays: o['backup-keep-days'] === undefined ? undefined : checkKeepDays(Number(o['backup-keep-days'])),
      downloadIdleMs: parseDownloadIdleTimeout(text('download-idle-timeout')),
    },
    restoreFrom: restoreSource(text('restore-from')),
    platformBackup: platformBackupSchedule(o),
    drainBufferBytes: drainBufferSize(text('drain-buffer-size') ?? env.SLIPWAY_DRAIN_BUFFER_SIZE),
    certificates: {
      acmeDirectory: parseAcmeDirectory(text('acme-directory')),
      acmeEmail: parseAcmeEmail(text('acme-email')),
      acmeDirectoryCaFile: text('acme-directory-ca'),
      checkIntervalMs: parseCheckInterval(text('certificate-check-interval')),
      acmeRetryBaseMs: parseAcmeRetryBase(text('acme-retry-base')),
      requireDomainVerification: o['require-domain-verification'] === true,
      dnsResolver: parseDnsResolver(text('dns-resolver')),
    },
    backend: parseBackend(text('backend') ?? env.SLIPWAY_BACKEND),
    swarm: {
      dockerSocket: text('docker-socket') ?? '/var/run/docker.sock',
      registry: text('registry') ?? env.SLIPWAY_REGISTRY ?? DEFAULT_REGISTRY,
      registryUser: text('registry-user') ?? env.SLIPWAY_REGISTRY_USER,
      registryPasswordFile: text('registry-password-file') ?? env.SLIPWAY_REGISTRY_PASSWORD_FILE,
      registryCaFile: text('registry-ca'),
      subnet: text('swarm-subnet') ?? DEFAULT_SWARM_SUBNET,
      ...optionalBucketServer(
        text('swarm-bucket-server') ?? env.SLIPWAY_SWARM_BUCKET_SERVER,
        text('swarm-bucket-sftp') ?? env.SLIPWAY_SWARM_BUCKET_SFTP,
      ),
    },
  };
}

/** Checked at parse time: a wrong address stops the start before anything runs. */
function optionalBucketServer(value: string | undefined, olderSftpValue: string | undefined): { bucketServer?: string } {
  if (value !== undefined && value !== '') return { bucketServer: parseBucketServerAddress(value) };
  if (olderSftpValue !== undefined && olderSftpValue !== '') return { bucketServer: addressOfSftpListen(olderSftpValue) };
  return {};
}

function metricsListen(value: string | undefined): { host: string; port: number } | undefined {
  return value === undefined || value === '' ? undefined : parseListenAddress('--metrics-listen', value);
}

/** The most `--drain-buffer-size` may give one drain: each drain of each app reserves it on the data folder's disk. */
const MAX_DRAIN_BUFFER_BYTES = 1024 * 1024 * 1024;

function drainBufferSize(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const bytes = parseSize('--drain-buffer-size', value);
  if (bytes < MAX_DRAIN_BUFFER_BYTES / 1024 || bytes > MAX_DRAIN_BUFFER_BYTES) {
    throw new Error(`--drain-buffer-size must be from 1M to 1G, not ${JSON.stringify(value)}.`);
  }
  return bytes;
}

function parseDownloadIdleTimeout(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1 || Number(value) > 3600) {
    throw new Error(`--download-idle-timeout must be a whole number of seconds from 1 to 3600, not ${JSON.stringify(value.slice(0, 40))}.`);
  }
  return Number(value) * 1000;
}

function parseOrgsPerUser(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^\d+$/.test(value.trim()) || Number(value) > 1000) {
    throw new Error(`--orgs-per-user must be a whole number from 0 to 1000, not ${JSON.stringify(value.slice(0, 40))}.`);
  }
  return Number(value);
}

/** docs/behaviour.md, Notifications; the URL's own checks (scheme, addresses) run when the daemon starts. */
function smtpSettings(url: string | undefined, from: string | undefined, domain: string): { url: string; from: string } | undefined {
  if (url === undefined || url === '') return undefined;
  // Only the scheme here (the password stays out of the message); the addresses are checked at start.
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (scheme !== 'smtp' && scheme !== 'smtps') {
    throw new Error(`--smtp-url must be smtp://user:pass@host:port or smtps://…, not a ${scheme ?? 'non-URL'} address.`);
  }
  const sender = from ?? `slipway@${domain}`;
  if (!/^[^\s@,;<>"]+@[^\s@,;<>"]+$/.test(sender)) throw new Error(`--smtp-from must be an e-mail address, not ${JSON.stringify(sender)}.`);
  return { url, from: sender };
}

/** `--restore-from`: a backup of the backup store by name (or `latest`), else a folder path. */
function restoreSource(from: string | undefined): string | undefined {
  if (from === undefined) return undefined;
  return namesStoredBackup(from) ? from : resolve(from);
}

/** `--platform-backup-*`: the place is required for the others to mean anything. */
function platformBackupSchedule(o: OptionValues): PlatformBackupSchedule | undefined {
  const to = o['platform-backup-to'] as string | undefined;
  const at = o['platform-backup-at'] as string | undefined;
  const keep = o['platform-backup-keep'] as string | undefined;
  if (to === undefined) {
    if (at !== undefined || keep !== undefined)
      throw new Error('--platform-backup-at and --platform-backup-keep need --platform-backup-to store (or an absolute folder).');
    return undefined;
  }
  if (to !== STORE_TARGET && !isAbsolute(to)) {
    throw new Error(
      `--platform-backup-to takes \`store\` (the backup store add-on backups go to) or an absolute folder, not ${JSON.stringify(to)}.`,
    );
  }
  const kept = keep === undefined ? DEFAULT_PLATFORM_BACKUP_KEEP : Number(keep);
  if (!Number.isInteger(kept) || kept < 1 || kept > 365) {
    throw new Error(`--platform-backup-keep must be a whole number from 1 to 365, not ${JSON.stringify(keep)}.`);
  }
  return { to, at: checkTimeOfDay(at ?? DEFAULT_PLATFORM_BACKUP_AT, '--platform-backup-at'), keep: kept };
}

/** Releases kept per app for rollbacks: at least 1 (the serving one). */
function parseKeptReleases(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100)
    throw new Error(`--kept-releases must be a whole number from 1 to 100, not ${JSON.stringify(value)}.`);
  return n;
}
