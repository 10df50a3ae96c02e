import { execFile } from 'node:child_process';
import { chown, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { assertTraversable, ensureDir } from '../directories.js';
import { randomPassword } from '../secrets.js';
import {
  ServerProcess,
  isOurServer,
  logTail,
  readPidFile,
  waitUntilReady,
} from '../server-process.js';
import { ensureSystemUser, type SystemUser } from '../system-user.js';
import { findPostgresBinaries } from './binaries.js';
import { ADMIN_ROLE, hbaConf, initdbArgv, postgresArgv, type ClusterLayout } from './cluster-config.js';

const run = promisify(execFile);

export interface EmbeddedClusterOptions {
  /** Folder of the cluster and its files, e.g. `<dataDir>/postgresql`. */
  root: string;
  port: number;
  listenAddresses: string[];
  /** CIDR apps connect from, allowed in pg_hba.conf besides loopback. */
  appSubnet: string;
  /** Unprivileged account the server runs as (initdb refuses root). */
  serverUser: string;
  startTimeoutMs?: number;
}

/** How slipway itself connects to the cluster as its superuser. */
export interface AdminTarget {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
}

export interface ClusterTimings {
  /** Set only when this start created the cluster. */
  initdbMs?: number;
  startMs: number;
  adopted: boolean;
}

/**
 * A PostgreSQL cluster slipway creates and runs itself from Debian's server binaries:
 *   <root>/data            PGDATA (server user, 0700)
 *   <root>/run             unix socket folder (server user)
 *   <root>/pg_hba.conf     rewritten on every start (root, 0644)
 *   <root>/admin-password  superuser password (root, 0600)
 *   <root>/postgres.log    server output
 */
export class EmbeddedCluster {
  private server: ServerProcess | undefined;
  private admin: AdminTarget | undefined;
  major: number | undefined;
  timings: ClusterTimings | undefined;

  constructor(private readonly options: EmbeddedClusterOptions) {}

  get layout(): ClusterLayout & { root: string; passwordFile: string; logFile: string } {
    const root = this.options.root;
    return {
      root,
      dataDir: join(root, 'data'),
      socketDir: join(root, 'run'),
      hbaFile: join(root, 'pg_hba.conf'),
      passwordFile: join(root, 'admin-password'),
      logFile: join(root, 'postgres.log'),
    };
  }

  /** Creates the cluster if needed, starts it (or adopts one left running) and waits until it answers. */
  async start(): Promise<AdminTarget> {
    if (this.server?.isRunning() && this.admin) return this.admin;
    const layout = this.layout;
    const user = await ensureSystemUser(this.options.serverUser);
    await assertTraversable(dirname(layout.root), user);
    await ensureDir(layout.root, 0o755);
    await ensureDir(layout.socketDir, 0o750, user);

    let initdbMs: number | undefined;
    let versionText = await readOptional(join(layout.dataDir, 'PG_VERSION'));
    if (versionText === undefined) {
      initdbMs = await this.initdb(user);
      versionText = await readFile(join(layout.dataDir, 'PG_VERSION'), 'utf8');
    }
    const major = Number(versionText.trim());
    const binaries = await findPostgresBinaries(major);
    const password = await readOptional(layout.passwordFile);
    if (!password) {
      throw new Error(
        `The cluster in ${layout.dataDir} exists but its superuser password file ${layout.passwordFile} is missing; ` +
          `restore it, or move the cluster away to let slipway create a new one.`,
      );
    }
    this.admin = { host: '127.0.0.1', port: this.options.port, user: ADMIN_ROLE, password: password.trim(), database: 'postgres' };
    await writeFile(layout.hbaFile, hbaConf(this.options.appSubnet), { mode: 0o644 });

    const began = Date.now();
    const adopted = await this.adoptRunning();
    if (!adopted) {
      this.server = await ServerProcess.spawn('the PostgreSQL add-on server', {
        argv: postgresArgv(binaries.postgres, layout, this.options.listenAddresses, this.options.port),
        user,
        cwd: layout.dataDir,
        logFile: layout.logFile,
      });
    }
    const admin = this.admin;
    await waitUntilReady(this.server!, () => canQuery(admin), this.options.startTimeoutMs ?? 60_000, async (reason) => {
      await this.server?.stop('SIGINT', 10_000);
      return new Error(
        `PostgreSQL add-on server did not start: ${reason}. Last lines of ${layout.logFile}:\n` +
          (await logTail(layout.logFile)),
      );
    });
    this.major = major;
    this.timings = { initdbMs, startMs: Date.now() - began, adopted };
    return admin;
  }

  /** Fast shutdown (SIGINT: open sessions are ended, data is safe), then SIGKILL after 30 s. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await server?.stop('SIGINT', 30_000);
  }

  private async initdb(user: SystemUser): Promise<number> {
    const layout = this.layout;
    const existing = await readdir(layout.dataDir).catch(() => [] as string[]);
    if (existing.length > 0) {
      throw new Error(
        `${layout.dataDir} is not empty but holds no PG_VERSION (an interrupted initdb?). ` +
          `Inspect it and remove it to let slipway create the cluster again.`,
      );
    }
    const binaries = await findPostgresBinaries();
    await ensureDir(layout.dataDir, 0o700, user);
    const password = randomPassword();
    // Kept before initdb runs so a crash in between cannot leave a cluster nobody can log into.
    await writeFile(layout.passwordFile, `${password}\n`, { mode: 0o600 });
    const pwfile = join(layout.socketDir, '.initdb-password');
    await writeFile(pwfile, `${password}\n`, { mode: 0o600 });
    await chown(pwfile, user.uid, user.gid);
    const began = Date.now();
    try {
      const [cmd, ...args] = initdbArgv(binaries.initdb, layout.dataDir, pwfile);
      await run(cmd!, args, { uid: user.uid, gid: user.gid, cwd: layout.root, env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' } });
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(`initdb failed for ${layout.dataDir}: ${(e.stderr || e.message).trim()}`);
    } finally {
      await rm(pwfile, { force: true });
    }
    return Date.now() - began;
  }

  /**
   * A server left running by an earlier daemon (which crashed or was killed) still holds the
   * data directory; a second postmaster would refuse to start, so take the running one over.
   */
  private async adoptRunning(): Promise<boolean> {
    const layout = this.layout;
    const pidFile = join(layout.dataDir, 'postmaster.pid');
    const pid = await readPidFile(pidFile);
    if (pid === undefined || !(await isOurServer(pid, 'postgres', layout.dataDir))) return false;
    const lines = (await readFile(pidFile, 'utf8')).split('\n');
    const server = ServerProcess.adopt('the PostgreSQL add-on server', pid);
    if (Number(lines[3]) !== this.options.port) {
      // Listening on another port than configured: restart it with the current settings.
      await server.stop('SIGINT', 30_000);
      return false;
    }
    try {
      process.kill(pid, 'SIGHUP'); // re-read pg_hba.conf, which was just rewritten
    } catch {
      return false; // it exited meanwhile: start a fresh one
    }
    this.server = server;
    return true;
  }
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
}

async function canQuery(target: AdminTarget): Promise<boolean> {
  const client = new pg.Client({ ...target, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } finally {
    await client.end().catch(() => undefined);
  }
}
