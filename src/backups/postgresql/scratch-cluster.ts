import { runChecked } from '../../executor/run-captured.js';
import { endScratchServer, isolatedAs, stopScratchServer } from '../scratch-server.js';
import { runStreamed } from '../../executor/run-streamed.js';
import { startServer, type StartedServer } from '../../executor/start-server.js';
import { constants } from 'node:fs';
import { chmod, chown, mkdir, open, readFile, rename, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import type { SystemUser } from '../../addons/system-user.js';
import { ADMIN_ROLE } from '../../addons/postgresql/cluster-config.js';
import type { BackupStore } from '../store/backup-store.js';
import { asAdmin } from './admin-client.js';
import { isWalFileName, walKey } from './wal-shipper.js';
import { checkBaseFiles } from './base-manifest.js';
import type { ObjectReadCheck } from '../object-sums.js';

/** Where a restore stops: a named restore point, a time, or the base backup's own end. */
export type RecoveryTarget = { name: string } | { time: Date } | { immediate: true };

export interface ScratchRestore {
  /** Folder under which the throw-away cluster gets a folder of its own (root's). */
  scratchRoot: string;
  user: SystemUser;
  /** Folder of the PostgreSQL server binaries (postgres, pg_dump, pg_amcheck...). */
  binDir: string;
  store: BackupStore;
  /** The base backup (a tar of PGDATA). */
  baseKey: string;
  /**
   * A base backup streamed straight from a live server (`pg_basebackup -Ft -X fetch`, its WAL
   * inside) instead of the stored `baseKey`: a fork of the server as it is now.
   */
  baseStream?: () => Readable;
  /**
   * Each object read from the store goes through this check as it is read (object-sums.ts);
   * its `finish` rejects, naming the object, before the copy starts.
   */
  checkObject?: (key: string, body: Readable) => ObjectReadCheck;
  /** The archived WAL files replay may need, by name. */
  walNames: string[];
  /** Where they are in the store (WAL_PREFIX unless an add-on server's). */
  walPrefix?: string;
  target: RecoveryTarget;
  /** The superuser's password: the restored cluster has the roles of the live one. */
  adminPassword: string;
  timeoutMs?: number;
}

const PORT = 5432;

/**
 * A copy of the add-on cluster restored from a backup into a folder of its own and started
 * with no network at all: its own empty network namespace (unshare), no TCP listener, a unix
 * socket in a folder only root and the server account can enter. Verifications, point-in-time
 * restores and downloads read from it; remove() leaves nothing behind.
 */
export class ScratchCluster {
  private server: StartedServer | undefined;
  private exited: Promise<void> | undefined;

  private constructor(
    readonly folder: string,
    private readonly o: ScratchRestore,
  ) {}

  /** The port in the socket's name (no TCP listener). */
  readonly port = PORT;

  /** What pg_verifybackup found of the base backup's files, for the verification's account. */
  filesChecked = '';

  /** The superuser's password: the copy has the live cluster's roles. */
  get password(): string {
    return this.o.adminPassword;
  }

  get socketDir(): string {
    return join(this.folder, 'run');
  }

  get dataDir(): string {
    return join(this.folder, 'data');
  }

  /** Environment for the PostgreSQL client tools (pg_dump, pg_amcheck) to reach it. */
  clientEnv(): Record<string, string> {
    return { PATH: '/usr/bin:/bin', PGHOST: this.socketDir, PGPORT: String(PORT), PGUSER: ADMIN_ROLE, PGPASSWORD: this.o.adminPassword };
  }

  static async restore(o: ScratchRestore): Promise<ScratchCluster> {
    await mkdir(o.scratchRoot, { recursive: true, mode: 0o711 });
    const folder = join(o.scratchRoot, `pg-${randomBytes(6).toString('hex')}`);
    const cluster = new ScratchCluster(folder, o);
    try {
      await cluster.prepare();
      await cluster.start();
      return cluster;
    } catch (error) {
      await cluster.remove();
      throw error;
    }
  }

  private async prepare(): Promise<void> {
    const { user } = this.o;
    await mkdir(this.folder, { mode: 0o750 });
    await chown(this.folder, 0, user.gid);
    for (const own of [this.dataDir, this.socketDir]) {
      await mkdir(own, { mode: 0o700 });
      await chown(own, user.uid, user.gid);
    }
    const walDir = join(this.folder, 'wal');
    await mkdir(walDir, { mode: 0o750 });
    await chown(walDir, 0, user.gid);
    await this.extractBase();
    this.filesChecked = await checkBaseFiles({ binDir: this.o.binDir, dataDir: this.dataDir, baseKey: this.o.baseKey, user });
    for (const name of this.o.walNames) {
      if (!isWalFileName(name)) throw new Error(`"${name}" is not a WAL file name.`);
      const path = join(walDir, name);
      const key = walKey(name, this.o.walPrefix);
      const body = await this.o.store.get(key);
      const checked = this.o.checkObject?.(key, body);
      await writeStream(path, checked?.stream ?? body);
      await checked?.finish();
      await chown(path, 0, user.gid);
      await chmod(path, 0o640);
    }
    await writeFile(join(this.folder, 'pg_hba.conf'), 'local all all scram-sha-256\n', { mode: 0o644, flag: 'wx' });
    // Created by the server's account, in its own folder: nothing from the backup is opened by root.
    await runAs(user, ['touch', join(this.dataDir, 'recovery.signal')]);
  }

  /** tar runs as the server's account, inside the folder it owns. */
  private async extractBase(): Promise<void> {
    const { user } = this.o;
    const body = this.o.baseStream ? this.o.baseStream() : await this.o.store.get(this.o.baseKey);
    const checked = this.o.baseStream ? undefined : this.o.checkObject?.(this.o.baseKey, body);
    const tar = runStreamed({
      argv: ['tar', '-x', '-f', '-', '-C', this.dataDir, '--no-same-owner'],
      env: { PATH: '/usr/bin:/bin' },
      user: { uid: user.uid, gid: user.gid },
      stdin: checked?.stream ?? body,
      name: 'tar',
    });
    tar.stdout.resume();
    await tar.done.catch(async (error: Error) => {
      // A changed object is named as such, even when the change broke the archive itself.
      await checked?.finish();
      throw new Error(`The base backup is not a whole archive: ${error.message}.`);
    });
    await checked?.finish();
  }

  private recoverySettings(): string[] {
    const target = this.o.target;
    const settings = [`restore_command=cp ${join(this.folder, 'wal')}/%f %p`, 'recovery_target_action=promote'];
    // A restore point lies on the timeline its backup was taken on: replay stays on it, even when
    // a later restore in place started a newer one from an earlier point. A time follows the
    // newest timeline (a restore in place moves the add-on onto it).
    if ('name' in target) settings.push(`recovery_target_name=${target.name}`, 'recovery_target_timeline=current');
    else if ('time' in target) settings.push(`recovery_target_time=${postgresTime(target.time)}`, 'recovery_target_inclusive=true');
    else settings.push('recovery_target=immediate', 'recovery_target_timeline=current');
    return settings;
  }

  private async start(): Promise<void> {
    const { user } = this.o;
    const settings = [
      'listen_addresses=',
      `unix_socket_directories=${this.socketDir}`,
      `port=${PORT}`,
      `hba_file=${join(this.folder, 'pg_hba.conf')}`,
      'archive_mode=off',
      'logging_collector=off',
      'shared_buffers=32MB',
      ...this.recoverySettings(),
    ];
    const logFile = join(this.folder, 'postgres.log');
    const server = await startServer({
      argv: isolatedAs(user, [join(this.o.binDir, 'postgres'), '-D', this.dataDir, ...settings.flatMap((s) => ['-c', s])]),
      cwd: this.dataDir,
      env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' },
      logFile,
    });
    this.server = server;
    let ended = false;
    this.exited = server.exited.then(() => {
      ended = true;
    });
    const deadline = Date.now() + (this.o.timeoutMs ?? 600_000);
    for (;;) {
      if (ended) throw new Error(`The restored copy did not start: ${await recoveryFailure(logFile)}`);
      const state = await this.queryOne<{ recovering: boolean }>('postgres', 'SELECT pg_catalog.pg_is_in_recovery() AS recovering').catch(
        () => undefined,
      );
      if (state && !state.recovering) return;
      if (Date.now() > deadline) throw new Error('The restored copy was still replaying WAL when its time ran out.');
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  async query<T extends pg.QueryResultRow>(database: string, text: string, values: unknown[] = []): Promise<T[]> {
    return asAdmin(this, database, async (client) => (await client.query<T>(text, values)).rows);
  }

  private async queryOne<T extends pg.QueryResultRow>(database: string, text: string): Promise<T | undefined> {
    return (await this.query<T>(database, text))[0];
  }

  /**
   * A whole-platform restore keeps the copy: a fast shutdown (a clean checkpoint after the
   * promotion), then its data folder is moved to `dest` (same file system, owned by the server's
   * account already) and the rest of the scratch folder goes.
   */
  async handOver(dest: string): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await stopScratchServer(server, this.exited, 'SIGINT');
    try {
      await rename(this.dataDir, dest);
    } finally {
      await endScratchServer(undefined, undefined, 'SIGINT', this.folder);
    }
  }

  /** Fast shutdown, then the whole folder goes. Safe to call more than once. */
  async remove(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await endScratchServer(server, this.exited, 'SIGINT', this.folder);
  }
}

/** A timestamptz PostgreSQL reads (it refuses ISO 8601's T and Z here): 2026-11-26 14:54:28.441+00. */
export function postgresTime(time: Date): string {
  return time.toISOString().replace('T', ' ').replace('Z', '+00');
}

/** What PostgreSQL said when recovery failed, in its own words (its last FATAL or PANIC lines). */
async function recoveryFailure(logFile: string): Promise<string> {
  const text = await readFile(logFile, 'utf8').catch(() => '');
  // Our own polls while it started are not the reason.
  const lines = text.split('\n').filter((l) => /FATAL|PANIC|ERROR/.test(l) && !/is starting up/.test(l));
  return lines.slice(-3).join(' / ') || 'it exited without saying why';
}

async function writeStream(path: string, body: Readable): Promise<void> {
  // A new file only (O_EXCL), never through a link; the stream closes it when done.
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  const handle = await open(path, flags, 0o600);
  await pipeline(body, handle.createWriteStream());
}

async function runAs(user: SystemUser, argv: string[]): Promise<void> {
  await runChecked(argv, { user: { uid: user.uid, gid: user.gid }, env: { PATH: '/usr/bin:/bin' }, cwd: '/' });
}
