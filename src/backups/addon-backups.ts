import { randomBytes } from 'node:crypto';
import { FairJobs, type FairLimits } from '../shared/fair-share.js';
import type { Readable } from 'node:stream';
import { ConflictError, NotFoundError, SlipwayError, ValidationError } from '../core/errors.js';
import type { DiskReserve } from '../storage/disk-reserve.js';
import type { AddonManager } from '../addons/addon-manager.js';
import type { AddonRow } from '../store/addons.js';
import type { AddonBackupRow, BackupKind } from '../store/addon-backups.js';
import type { Store } from '../store/store.js';
import { type BackupEngine, type EngineAddon, type NewAddonOptions, type RestoreFrom, RestoreLeftChanges } from './engine.js';
import { BackupSchedules, type ScheduleDefaults } from './schedule.js';
import { BackupObjectDamaged } from './store/backup-store.js';

export interface AddonBackupsOptions {
  store: Store;
  addons: AddonManager;
  /**
   * The engine of each add-on provider that has backups, by provider name (`postgresql`,
   * `redis`). PostgreSQL has none when its server is not the embedded one (its backups are its
   * administrator's).
   */
  engines: ReadonlyMap<string, BackupEngine>;
  defaults: ScheduleDefaults;
  log(line: string): void;
  /** A line in the log of each app given. */
  tellApps(appIds: string[], line: string): void;
  verified(provider: string, result: 'verified' | 'failed'): void;
  /** The free space backups leave on the data folder's disk and a local backup folder's; absent: not checked. */
  reserve?: DiskReserve;
  /** The organisation's quotas; absent: not checked (unit tests). */
  bounds?: BackupBounds;
  /** How long a download may make no progress before it is ended (`--download-idle-timeout`; default DOWNLOAD_IDLE_MS). */
  downloadIdleMs?: number;
}

/** What the organisation's quotas say before a backup job: each throws the refusal. */
export interface BackupBounds {
  /** Before `slipway addon backup`: the manual backups it keeps. */
  manualBackup(addon: AddonRow): void;
  /** Before `slipway addon restore --as`: the new add-on counts against its add-ons. */
  newAddon(addon: AddonRow): void;
}

/** Backup jobs at once: per organisation, and over all (each may run a scratch server). */
export const BACKUP_JOB_LIMITS: FairLimits = { perKey: 1, total: 2 };

/** How long a download may make no progress (its client reads nothing) before it is ended and frees its job. */
export const DOWNLOAD_IDLE_MS = 60_000;

/** A backup, a second of the restore window, or (a fork, `--as` only) the add-on as it is now. */
export type RestoreSource = { backupId: string } | { time: Date } | { now: true };

/**
 * How long the backup objects of a deleted add-on stay (docs/behaviour.md, Add-on backups): long
 * enough to undo a mistaken deletion with the operator's help, short enough that a deleted
 * add-on's data does not linger. The sweep runs with the backup schedule's retention.
 */
export const DELETED_ADDON_GRACE_DAYS = 7;

/**
 * The add-ons' backups as users see them: taken on demand and on schedule, each restored once
 * into a throw-away copy and checked before it counts as good, restored in place or into a new
 * add-on, kept for the days the schedule says. Jobs are shared fairly between organisations.
 */
export class AddonBackups {
  /**
   * One job per organisation at a time, two at once over all of them, organisations in turn: a
   * tenant's long backup, held lock or download nobody reads delays only that tenant.
   */
  private readonly jobs = new FairJobs(BACKUP_JOB_LIMITS);
  private verifying: Promise<void> | undefined;
  readonly schedules: BackupSchedules;

  constructor(private readonly o: AddonBackupsOptions) {
    this.schedules = new BackupSchedules(o.store, o.defaults);
  }

  list(addon: AddonRow): AddonBackupRow[] {
    this.engine(addon);
    return this.o.store.addonBackups.listForAddon(addon.id);
  }

  /** Takes a backup now; resolves once it is stored (its verification follows). */
  backupNow(addon: AddonRow, kind: BackupKind = 'manual'): Promise<AddonBackupRow> {
    const engine = this.engine(addon);
    // Checked before it waits its turn (a refusal is at once) and again when its turn comes.
    const bound = () => kind === 'manual' && this.o.bounds?.manualBackup(addon);
    bound();
    return this.serial(addon.org_id, async () => {
      bound();
      const [row] = await this.take(engine, [addon], kind);
      this.verifyPending();
      return row!;
    });
  }

  /**
   * The scheduled backups of every add-on due now (PostgreSQL's in one base backup, a snapshot
   * of each Redis add-on); then retention.
   */
  runSchedule(now = new Date()): Promise<void> {
    return this.exclusive(async () => {
      for (const [provider, engine] of this.o.engines) {
        const due = this.o.store.addons
          .all()
          .filter((addon) => addon.provider === provider && Object.keys(this.o.store.addons.config(addon)).length > 0)
          .filter((addon) => this.schedules.due(addon.id, now));
        const rounds = engine.takesTogether ? (due.length > 0 ? [due] : []) : due.map((addon) => [addon]);
        for (const addons of rounds) {
          try {
            await this.take(engine, addons, 'scheduled');
          } catch (error) {
            const which = engine.takesTogether ? `${engine.label} backup` : `backup of ${engine.label} add-on ${addons[0]!.name}`;
            this.o.log(`The scheduled ${which} failed: ${(error as Error).message}`);
          }
        }
      }
      await this.prune(now);
      this.verifyPending();
    });
  }

  /**
   * A fresh backup of every add-on (PostgreSQL's in one base backup), each restore-tested
   * before this resolves: what a whole-platform backup copies. Rejects naming the add-on whose
   * backup failed its test.
   */
  backupAllVerified(): Promise<Array<{ addon: AddonRow; backup: AddonBackupRow }>> {
    return this.exclusive(async () => {
      const taken: Array<{ addon: AddonRow; backup: AddonBackupRow }> = [];
      for (const [provider, engine] of this.o.engines) {
        const addons = this.o.store.addons
          .all()
          .filter((addon) => addon.provider === provider && Object.keys(this.o.store.addons.config(addon)).length > 0);
        const rounds = engine.takesTogether ? (addons.length > 0 ? [addons] : []) : addons.map((addon) => [addon]);
        for (const round of rounds) {
          const rows = await this.take(engine, round, 'manual');
          for (const [i, backup] of rows.entries()) taken.push({ addon: round[i]!, backup });
        }
      }
      for (const item of taken) {
        item.backup = await this.verifyOne(item.backup);
        if (item.backup.verification !== 'verified') {
          throw new Error(`The backup of add-on ${item.addon.name} failed its restore test: ${item.backup.verification_detail}`);
        }
      }
      return taken;
    });
  }

  private async take(engine: BackupEngine, addons: AddonRow[], kind: BackupKind): Promise<AddonBackupRow[]> {
    await this.o.reserve?.check(addons.length === 1 ? `backup of add-on ${addons[0]!.name}` : `${engine.label} backup`);
    const ids = addons.map(() => `backup_${Date.now().toString(36)}${randomBytes(5).toString('hex')}`);
    const taken = await engine.take(addons.map((addon, i) => ({ addon: this.engineAddon(addon), backupId: ids[i]! })));
    return taken.map((t, i) =>
      this.o.store.addonBackups.insert({
        id: ids[i]!,
        addon_id: addons[i]!.id,
        kind,
        object_key: t.objectKey,
        restore_point: t.restorePoint,
        created_at: t.createdAt.toISOString(),
        finished_at: t.finishedAt.toISOString(),
        size_bytes: t.sizeBytes,
        counts_json: JSON.stringify(t.counts),
      }),
    );
  }

  /** Restore-tests one backup now; resolves with its row as it ends (verified or failed). */
  verify(addon: AddonRow, backupId: string): Promise<AddonBackupRow> {
    const backup = this.backup(addon, backupId);
    return this.serial(addon.org_id, () => this.verifyOne(backup));
  }

  /** Verifies, one after the other, the backups still waiting (also those a restart left waiting). */
  verifyPending(): void {
    if (this.verifying) return;
    this.verifying = (async () => {
      for (;;) {
        const next = this.o.store.addonBackups.pending()[0];
        if (!next) break;
        await this.serial(this.o.store.addons.byId(next.addon_id)?.org_id ?? 'deleted', () => this.verifyOne(next));
      }
    })()
      .catch((error: Error) => this.o.log(`Backup verification stopped: ${error.message}`))
      .finally(() => {
        this.verifying = undefined;
      });
  }

  private async verifyOne(backup: AddonBackupRow): Promise<AddonBackupRow> {
    const addon = this.o.store.addons.byId(backup.addon_id);
    const engine = addon && this.o.engines.get(addon.provider);
    if (!addon || !engine) {
      this.o.store.addonBackups.setVerification(
        backup.id,
        'failed',
        'nothing here can restore it (its add-on or its server is gone)',
        new Date(),
      );
      return this.o.store.addonBackups.byId(backup.id)!;
    }
    try {
      const detail = await engine.verify(backup, this.engineAddon(addon));
      this.o.store.addonBackups.setVerification(backup.id, 'verified', detail, new Date());
      this.o.verified(addon.provider, 'verified');
    } catch (error) {
      const reason = (error as Error).message;
      this.o.store.addonBackups.setVerification(backup.id, 'failed', reason, new Date());
      this.o.verified(addon.provider, 'failed');
      this.o.log(`Backup ${backup.id} of add-on ${addon.name} (${addon.id}) FAILED its restore test: ${reason}`);
    }
    return this.o.store.addonBackups.byId(backup.id)!;
  }

  /**
   * The times a restore can reach: from the oldest usable backup's end to now; none for add-ons
   * that restore to a backup only (Redis).
   */
  window(addon: AddonRow): { from: Date; to: Date } | undefined {
    if (!this.engine(addon).toAnySecond) return undefined;
    const usable = this.o.store.addonBackups.listForAddon(addon.id).filter((b) => b.verification !== 'failed');
    if (usable.length === 0) return undefined;
    const from = usable.map((b) => b.finished_at).sort()[0]!;
    return { from: new Date(from), to: new Date() };
  }

  /**
   * Restores the add-on as it was at a backup or a time: in place (a safety backup first; its
   * apps lose their connections and are told) or into a new add-on `as` of its organisation.
   */
  async restore(addon: AddonRow, source: RestoreSource, as?: string): Promise<{ addon: AddonRow; safetyBackup?: string }> {
    const engine = this.engine(addon);
    if ('now' in source) {
      if (as === undefined) {
        throw new ValidationError(
          'A restore in place needs a backup (--backup <id>) or a time (--to <time>).',
          'Give --as <new-name> to fork the add-on as it is now.',
        );
      }
      return this.fork(engine, addon, as);
    }
    const from = this.resolveSource(engine, addon, source);
    if (as !== undefined) {
      return this.intoNewAddon(
        addon,
        as,
        (created) => engine.restoreInto(from, this.engineAddon(addon), this.engineAddon(created)),
        engine.newAddonOptions?.(this.engineAddon(addon)),
      );
    }
    return this.serial(addon.org_id, async () => {
      const [safety] = await this.take(engine, [addon], 'safety');
      const apps = this.o.store.links.appsOfAddon(addon.id);
      const what = 'backupId' in source ? `backup ${source.backupId}` : source.time.toISOString();
      this.o.tellApps(
        apps,
        `The add-on ${addon.name} is being restored to ${what}: ${engine.duringRestore} (safety backup ${safety!.id}).`,
      );
      try {
        await engine.restoreInPlace(from, this.engineAddon(addon), safety!);
      } catch (error) {
        this.o.tellApps(
          apps,
          error instanceof RestoreLeftChanges
            ? `The restore of add-on ${addon.name} failed: ${error.message}.`
            : `The restore of add-on ${addon.name} failed; it keeps its data as it was.`,
        );
        throw restoreFailed(error);
      }
      this.o.tellApps(apps, `The add-on ${addon.name} was restored to ${what}.`);
      this.verifyPending();
      return { addon, safetyBackup: safety!.id };
    });
  }

  /**
   * A new add-on `as` with the add-on's data as it is now: the engine's own fork (PostgreSQL: a
   * base backup streamed from server to server), or else a fresh safety backup restored into it.
   */
  private fork(engine: BackupEngine, addon: AddonRow, as: string): Promise<{ addon: AddonRow }> {
    return this.intoNewAddon(
      addon,
      as,
      async (created) => {
        const forked = (await engine.fork?.(this.engineAddon(addon), this.engineAddon(created))) ?? false;
        if (!forked) {
          const [fresh] = await this.take(engine, [addon], 'safety');
          await engine.restoreInto({ backup: fresh! }, this.engineAddon(addon), this.engineAddon(created));
        }
      },
      engine.newAddonOptions?.(this.engineAddon(addon)),
    );
  }

  /**
   * A new add-on `as` of the add-on's organisation (its name free, the quota checked now and at
   * its turn), filled by `fill`; removed again if filling it fails.
   */
  private intoNewAddon(
    addon: AddonRow,
    as: string,
    fill: (created: AddonRow) => Promise<void>,
    options: NewAddonOptions = {},
  ): Promise<{ addon: AddonRow }> {
    if (this.o.store.addons.byName(addon.org_id, as)) {
      throw new ConflictError(`The organisation already has an add-on named ${JSON.stringify(as)}.`, 'Choose another name with --as.');
    }
    this.o.bounds?.newAddon(addon);
    return this.serial(addon.org_id, async () => {
      this.o.bounds?.newAddon(addon);
      const created = await this.o.addons.create({ orgId: addon.org_id, provider: addon.provider, name: as, ...options });
      try {
        await fill(created);
      } catch (error) {
        await this.o.addons.remove(created).catch(() => undefined);
        throw restoreFailed(error);
      }
      return { addon: created };
    });
  }

  /** A portable dump of the add-on as the backup holds it: pg_dump's custom format (PostgreSQL), the RDB file (Redis). */
  download(addon: AddonRow, backupId: string, use: (dump: Readable) => Promise<void>): Promise<void> {
    const engine = this.engine(addon);
    const backup = this.backup(addon, backupId);
    return this.serial(addon.org_id, () =>
      engine.download(backup, this.engineAddon(addon), use).catch((error: unknown) => {
        // Found before a byte went out (the objects are checked first): the client is told why.
        if (error instanceof BackupObjectDamaged) {
          throw new SlipwayError(500, 'backup_damaged', `The download failed: ${error.message}`, error.hint);
        }
        throw error;
      }),
    );
  }

  /** How long a download may make no progress before it is ended and frees its job. */
  get downloadIdleMs(): number {
    return this.o.downloadIdleMs ?? DOWNLOAD_IDLE_MS;
  }

  /** How a download of the add-on's backups is named: `<backup id>.dump` (PostgreSQL), `<backup id>.rdb` (Redis). */
  dumpFileName(addon: AddonRow, backupId: string): string {
    return `${backupId}.${this.engine(addon).dumpExtension}`;
  }

  private resolveSource(engine: BackupEngine, addon: AddonRow, source: Exclude<RestoreSource, { now: true }>): RestoreFrom {
    if ('backupId' in source) {
      const backup = this.backup(addon, source.backupId);
      if (backup.verification === 'failed') {
        throw new ValidationError(`Backup ${backup.id} failed its restore test: ${backup.verification_detail}`, 'Choose another backup.');
      }
      return { backup };
    }
    if (!engine.toAnySecond) {
      throw new ValidationError(
        `${addon.name} is a ${engine.label} add-on: it restores to a snapshot, not to a second.`,
        `Give one of its backups with --backup <id> (\`slipway addon backups ${addon.name}\` lists them).`,
      );
    }
    const window = this.window(addon);
    const time = source.time;
    if (!window)
      throw new ValidationError(
        `The add-on ${addon.name} has no backup yet, so it has no time to restore to.`,
        'Take one with `slipway addon backup`.',
      );
    if (time < window.from || time > window.to) {
      throw new ValidationError(
        `${time.toISOString()} is outside the restore window of ${addon.name}: ${window.from.toISOString()} to now (${window.to.toISOString()}).`,
        'Give a time inside the window, or a backup with --backup.',
      );
    }
    const base = this.o.store.addonBackups
      .listForAddon(addon.id)
      .filter((b) => b.verification !== 'failed' && new Date(b.finished_at) <= time)
      .sort((a, b) => b.finished_at.localeCompare(a.finished_at))[0]!;
    return { backup: base, time };
  }

  private backup(addon: AddonRow, backupId: string): AddonBackupRow {
    const backup = this.o.store.addonBackups.byId(backupId);
    if (!backup || backup.addon_id !== addon.id) {
      const known = this.o.store.addonBackups.listForAddon(addon.id).map((b) => b.id);
      throw new NotFoundError(
        `The add-on ${addon.name} has no backup ${JSON.stringify(backupId)}.`,
        known.length ? `Its backups: ${known.join(', ')}.` : 'It has no backup yet; take one with `slipway addon backup`.',
      );
    }
    return backup;
  }

  /**
   * Removes backups older than their add-on keeps (never the newest verified one) and the
   * objects no backup uses any more, then what each engine no longer needs (PostgreSQL's WAL).
   */
  private async prune(now: Date): Promise<void> {
    await this.sweepDeleted(now);
    for (const addon of this.o.store.addons.all()) {
      const engine = this.o.engines.get(addon.provider);
      const keepMs = this.schedules.of(addon.id).keep_days * 86_400_000;
      const rows = this.o.store.addonBackups.listForAddon(addon.id).sort((a, b) => b.created_at.localeCompare(a.created_at));
      const newestVerified = rows.find((b) => b.verification === 'verified');
      for (const row of rows) {
        if (row === newestVerified || now.getTime() - new Date(row.created_at).getTime() <= keepMs) continue;
        this.o.store.addonBackups.delete(row.id);
        const unused =
          this.o.store.addonBackups.usersOfObject(row.object_key) === 0 &&
          this.o.store.addonBackups.deletedUsersOfObject(row.object_key, '') === 0;
        if (engine && unused) await engine.deleteObject(row.object_key);
      }
    }
    for (const engine of this.o.engines.values()) {
      if (!engine.pruned) continue;
      const kept = [
        ...new Set(
          this.o.store.addonBackups
            .all()
            .map((b) => b.object_key)
            // A deleted add-on's objects in their grace period keep what they rest on (WAL).
            .concat(this.o.store.addonBackups.deletedObjectKeys())
            .filter((key) => key.startsWith(engine.objectPrefix)),
        ),
      ];
      await engine.pruned(kept);
    }
  }

  /**
   * The objects of add-ons deleted more than the grace period ago go, unless a live backup
   * still rests on one (a PostgreSQL base backup shared with other add-ons stays until their
   * retention lets it go).
   */
  private async sweepDeleted(now: Date): Promise<void> {
    const before = new Date(now.getTime() - DELETED_ADDON_GRACE_DAYS * 86_400_000);
    for (const gone of this.o.store.addonBackups.deletedBefore(before)) {
      const engine = [...this.o.engines.values()].find((e) => gone.object_key.startsWith(e.objectPrefix));
      const unused =
        this.o.store.addonBackups.usersOfObject(gone.object_key) === 0 &&
        this.o.store.addonBackups.deletedUsersOfObject(gone.object_key, gone.backup_id) === 0;
      try {
        if (engine && unused) await engine.deleteObject(gone.object_key);
        this.o.store.addonBackups.forgetDeleted(gone.backup_id);
      } catch (error) {
        this.o.log(`The backup ${gone.backup_id} of a deleted add-on could not be removed yet: ${(error as Error).message}`);
      }
    }
  }

  private engine(addon: AddonRow): BackupEngine {
    const engine = this.o.engines.get(addon.provider);
    if (engine) return engine;
    throw new SlipwayError(
      501,
      'backups_unavailable',
      addon.provider === 'postgresql'
        ? "This platform uses an external PostgreSQL server: its backups are its administrator's."
        : `Backups of ${addon.provider} add-ons are not available yet.`,
    );
  }

  private engineAddon(addon: AddonRow): EngineAddon {
    const config = this.o.store.addons.config(addon);
    if (Object.keys(config).length === 0) throw new ConflictError(`The add-on ${addon.name} is still being created.`);
    return { id: addon.id, name: addon.name, config };
  }

  /** A job of one organisation's add-ons: it waits only behind that organisation's and the shared slots. */
  private serial<T>(orgId: string, job: () => Promise<T>): Promise<T> {
    return this.jobs.run(orgId, job);
  }

  /** A job over every organisation's add-ons (the daily round and its retention): it runs alone. */
  private exclusive<T>(job: () => Promise<T>): Promise<T> {
    return this.jobs.run('', job, { exclusive: true });
  }
}

function restoreFailed(error: unknown): SlipwayError {
  return new SlipwayError(
    500,
    'restore_failed',
    `The restore failed: ${(error as Error).message}`,
    error instanceof RestoreLeftChanges
      ? error.hint
      : error instanceof BackupObjectDamaged
        ? `Nothing was changed; the add-on keeps serving its current data. ${error.hint ?? ''}`.trim()
        : 'Nothing was changed; the add-on keeps serving its current data.',
  );
}
