import { join } from 'node:path';
import type { AddonManager } from '../addons/addon-manager.js';
import type { AddonProvider } from '../addons/provider.js';
import { PostgresqlProvider } from '../addons/postgresql/postgresql-provider.js';
import { RedisProvider } from '../addons/redis/redis-provider.js';
import { AddonBackups, type BackupBounds } from '../backups/addon-backups.js';
import type { BackupEngine } from '../backups/engine.js';
import { PostgresqlEngine } from '../backups/postgresql/postgresql-engine.js';
import { RedisBackups } from '../backups/redis/redis-backups.js';
import { BucketBackups } from '../backups/fs-bucket/bucket-backups.js';
import { FsBucketProvider } from '../addons/fs-bucket/fs-bucket-provider.js';
import { DEFAULT_SCHEDULE } from '../backups/schedule.js';
import type { EgressGuard } from '../network/egress-guard.js';
import { defaultBackupFolder, openBackupStore, type BackupStoreOptions } from '../backups/store/open-store.js';
import type { BackupStore } from '../backups/store/backup-store.js';
import { ObjectSums, SumRecordingStore } from '../backups/object-sums.js';
import type { DiskReserve } from '../storage/disk-reserve.js';
import type { Store } from '../store/store.js';
import type { BackupOptions } from './options.js';

/** How often the schedule is looked at: a backup starts within a minute of its time. */
const SCHEDULE_TICK_MS = 60_000;

/** The backup store the daemon's options name (a restore copies the add-ons' backups there too). */
export function backupStoreOptions(dataDir: string, settings: BackupOptions = {}): BackupStoreOptions {
  return {
    folder: settings.s3Url ? undefined : (settings.folder ?? defaultBackupFolder(dataDir)),
    s3Url: settings.s3Url,
    s3CredentialsFile: settings.s3CredentialsFile,
    keyFile: settings.keyFile,
    env: process.env,
  };
}

/**
 * The backup store the options name, the PostgreSQL archiver and the add-on backups service
 * with an engine per provider (PostgreSQL, Redis, FS buckets), its schedule ticking; `stop()` ends the
 * ticking (the archive spool keeps filling without a daemon and is shipped by the next one).
 */
export async function startBackups(o: {
  dataDir: string;
  options: BackupOptions | undefined;
  store: Store;
  addons: AddonManager;
  postgresql: AddonProvider | undefined;
  redis: AddonProvider | undefined;
  fsBuckets: AddonProvider | undefined;
  log(line: string): void;
  tellApps(appIds: string[], line: string): void;
  verified(provider: string, result: 'verified' | 'failed'): void;
  reserve?: DiskReserve;
  bounds?: BackupBounds;
  /** The daemon's egress guard, for an S3 endpoint. */
  egress?: EgressGuard;
}): Promise<{
  backups: AddonBackups;
  backupStore: BackupStore;
  begin(): void;
  stop(): void;
  /** How a restored FS bucket's apps are restarted (the deployer comes later in the start). */
  restartBucketAppsWith(restart: (addonId: string) => Promise<void>): void;
}> {
  const settings = o.options ?? {};
  // Every object the add-on backups put gets its size and SHA-256 recorded in the daemon's own database.
  const book = o.store.backupObjectSums;
  const backupStore = new SumRecordingStore(await openBackupStore({ ...backupStoreOptions(o.dataDir, settings), egress: o.egress }), book);
  const sums = new ObjectSums({ store: backupStore, book, log: o.log });
  const scratchRoot = join(o.dataDir, 'backup-scratch');
  const postgresql =
    o.postgresql instanceof PostgresqlProvider && o.postgresql.servers
      ? new PostgresqlEngine({ provider: o.postgresql, store: backupStore, sums, scratchRoot, log: o.log })
      : undefined;
  const engines = new Map<string, BackupEngine>();
  if (postgresql) engines.set('postgresql', postgresql);
  if (o.redis instanceof RedisProvider) {
    engines.set('redis', new RedisBackups({ servers: o.redis, store: backupStore, sums, scratchRoot, log: o.log }));
  }
  let restartBucketApps: (addonId: string) => Promise<void> = async () => undefined;
  if (o.fsBuckets instanceof FsBucketProvider) {
    const buckets = o.fsBuckets;
    engines.set(
      'fs-bucket',
      new BucketBackups({ buckets, store: backupStore, sums, scratchRoot, log: o.log, restartApps: (id) => restartBucketApps(id) }),
    );
  }
  const backups = new AddonBackups({
    store: o.store,
    addons: o.addons,
    engines,
    defaults: { at: settings.at ?? DEFAULT_SCHEDULE.at, keepDays: settings.keepDays ?? DEFAULT_SCHEDULE.keepDays },
    log: o.log,
    tellApps: o.tellApps,
    verified: o.verified,
    reserve: o.reserve,
    bounds: o.bounds,
    downloadIdleMs: settings.downloadIdleMs,
  });
  let timer: NodeJS.Timeout | undefined;
  return {
    backups,
    backupStore,
    /** Once the add-on servers run: ship what piled up, go on with waiting verifications and the schedule. */
    begin() {
      o.log(`Add-on backups go to ${backupStore.describe()}.`);
      void postgresql?.startShipping();
      backups.verifyPending();
      timer = setInterval(
        () => void backups.runSchedule().catch((error: Error) => o.log(`Backup schedule: ${error.message}`)),
        SCHEDULE_TICK_MS,
      );
      timer.unref();
    },
    restartBucketAppsWith(restart) {
      restartBucketApps = restart;
    },
    stop() {
      if (timer) clearInterval(timer);
      postgresql?.stopShipping();
    },
  };
}
