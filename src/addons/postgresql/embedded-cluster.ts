import { runChecked } from '../../executor/run-captured.js';
import { chown, mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type pg from 'pg';
import { assertTraversable, ensureDir } from '../directories.js';
import { randomPassword } from '../secrets.js';
import { ServerProcess, isOurServer, logTail, waitUntilReady } from '../server-process.js';
import { readPidFile } from '../../executor/pid-file.js';
import { quietSupervision, SupervisedServer, type SupervisionEvents } from '../server-supervisor.js';
import { ensureSystemUser, type SystemUser } from '../system-user.js';
import type { SandboxCgroups, SandboxLimits } from '../../sandbox/cgroups.js';
import { runsInSandbox, sandboxedArgv } from '../redis/server-sandbox.js';
import { findPostgresBinaries } from './binaries.js';
import type { HbaClient } from '../../network/addon-access.js';
import { asSuperuser } from './superuser-connection.js';
import { isWalFileName } from './wal-names.js';
import { ADMIN_ROLE, hbaConf, initdbArgv, postgresArgv, type ClusterLayout } from './cluster-config.js';

export interface EmbeddedClusterOptions {
  /** Folder of the cluster and its files, e.g. `<dataDir>/postgresql`. */
  root: string;
  port: number;
  listenAddresses: string[];
  /** CIDR sandboxes connect from; pg_hba.conf opens a database only to addresses in it (allowClients). */
  appSubnet: string;
  /** Unprivileged account the server runs as (initdb refuses root). */
  serverUser: string;
  /** The account, when it is made otherwise than by name (an add-on's own user, created on demand). */
  user?: () => Promise<SystemUser>;
  /**
   * A server of one add-on: it runs in a sandbox (no capabilities, IPC and host name namespaces
   * of its own) inside this control group with the plan's limits, and `root` is closed to other
   * accounts (0750, the server's group).
   */
  sandbox?: { cgroups: SandboxCgroups; group: string; limits: SandboxLimits };
  /** Further `-c` settings (an add-on server's plan sizing: postgresql/server-settings.ts). */
  settings?: string[];
  /** How messages name it, e.g. "the PostgreSQL server of add-on addon_…". */
  label?: string;
  /** The one add-on it serves (its restarts are told to that add-on's apps only). */
  addonId?: string;
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
 *   <root>/pg_hba.conf     rewritten on every start and client change (root, 0644)
 *   <root>/admin-password  superuser password (root, 0600)
 *   <root>/postgres.log    server output
 */
export class EmbeddedCluster {
  private server: SupervisedServer | undefined;
  private admin: AdminTarget | undefined;
  major: number | undefined;
  timings: ClusterTimings | undefined;
  private clients: HbaClient[] = [];
  /**
   * False until the daemon says which sandboxes may connect (allowClients). Until then the
   * pg_hba.conf on disk is left as the previous daemon wrote it: instances that outlived that
   * daemon keep reaching a server it left running, instead of being shut out until they are
   * announced again.
   */
  private clientsKnown = false;
  /** The pg_hba.conf on disk as this daemon last wrote or read it. */
  private writtenHba: string | undefined;
  /** The pg_hba.conf the running server has loaded; undefined when not known. */
  private loadedHba: string | undefined;
  private hbaChanges: Promise<void> = Promise.resolve();
  private events: SupervisionEvents = quietSupervision;

  constructor(private readonly options: EmbeddedClusterOptions) {}

  /** The port it listens on (the unix socket's name carries it too). */
  get port(): number {
    return this.options.port;
  }

  /** How slipway reaches it as its superuser, once started (or adopted) by this daemon. */
  get adminTarget(): AdminTarget | undefined {
    return this.server?.isSupervised() ? this.admin : undefined;
  }

  /** The unprivileged account the server runs as. */
  get serverUser(): string {
    return this.options.serverUser;
  }

  /** The account itself (created when missing): throw-away copies of its backups run as it too. */
  serverAccount(): Promise<SystemUser> {
    return this.options.user ? this.options.user() : ensureSystemUser(this.options.serverUser);
  }

  private get label(): string {
    return this.options.label ?? 'the PostgreSQL add-on server';
  }

  get layout(): ClusterLayout & { root: string; passwordFile: string; logFile: string } {
    const root = this.options.root;
    return {
      root,
      dataDir: join(root, 'data'),
      socketDir: join(root, 'run'),
      hbaFile: join(root, 'pg_hba.conf'),
      walSpoolDir: join(root, 'wal-spool'),
      passwordFile: join(root, 'admin-password'),
      logFile: join(root, 'postgres.log'),
    };
  }

  /** Who hears of the server's restarts after a crash. */
  superviseWith(events: SupervisionEvents): void {
    this.events = events;
  }

  /**
   * Creates the cluster if needed, starts it (or adopts one left running) and waits until it
   * answers; from then on a server that dies is started again (SupervisedServer).
   */
  async start(): Promise<AdminTarget> {
    if (this.server?.isSupervised() && this.admin) return this.admin;
    const layout = this.layout;
    const user = await this.serverAccount();
    await assertTraversable(dirname(layout.root), user);
    if (this.options.sandbox) {
      // The parent (`<data>/postgresql`) stays enterable; only the add-on's own folder is closed.
      await mkdir(dirname(layout.root), { recursive: true, mode: 0o755 });
      await ensureDir(layout.root, 0o750);
      await chown(layout.root, 0, user.gid);
    } else {
      await ensureDir(layout.root, 0o755);
    }
    await ensureDir(layout.socketDir, 0o750, user);
    await ensureDir(layout.walSpoolDir, 0o700, user);

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
    // An add-on's own server is reached over its unix socket: it listens on the gateway only, so
    // a port is never contended with another daemon's servers on loopback, and a probe never
    // reaches another server than this one.
    const host = this.options.sandbox ? layout.socketDir : '127.0.0.1';
    this.admin = { host, port: this.options.port, user: ADMIN_ROLE, password: password.trim(), database: 'postgres' };
    const onDisk = await readOptional(layout.hbaFile);
    const kept = onDisk !== undefined && !this.clientsKnown;
    if (!kept) await this.writeCurrentHba();
    else this.writtenHba = onDisk;

    const began = Date.now();
    const adoptedServer = await this.adoptRunning();
    let server = adoptedServer ?? (await this.spawnReady(binaries.postgres, user));
    if (adoptedServer) await this.waitReady(adoptedServer);
    if (adoptedServer && !(await archiving(this.admin))) {
      // Started by a slipway that kept no WAL archive: once, at the upgrade, it restarts with
      // archiving on (archive_mode takes effect only at a server start).
      this.events.log(`Restarting ${this.label} once to turn on WAL archiving for backups.`);
      await adoptedServer.stop('SIGINT', 30_000);
      server = await this.spawnReady(binaries.postgres, user);
    }
    const adopted = server === adoptedServer;
    if (adopted) this.reapplyLimits();
    // An adopted server loaded the file its daemon wrote: the one on disk, unless rewritten just now.
    const loaded = adopted && !kept ? undefined : this.writtenHba;
    this.server = new SupervisedServer(server, {
      provider: 'postgresql',
      addonId: this.options.addonId,
      label: server.label,
      relaunch: () => this.relaunch(binaries.postgres, user),
      restarted: () => this.restarted(),
      events: () => this.events,
    });
    this.major = major;
    this.timings = { initdbMs, startMs: Date.now() - began, adopted };
    this.loadedHba = loaded;
    // Clients allowed while it was starting are not in the file it read yet.
    await this.queueHbaChange();
    return this.admin;
  }

  /** After a crash: a server someone else started meanwhile is adopted, else a new one starts. */
  private async relaunch(postgres: string, user: SystemUser): Promise<ServerProcess> {
    const adopted = await this.adoptRunning();
    if (adopted) {
      await this.waitReady(adopted);
      if (this.clientsKnown) this.loadedHba = undefined; // what it loaded is not known: reload
      return adopted;
    }
    if (this.clientsKnown) await this.writeCurrentHba();
    const read = this.writtenHba;
    const server = await this.spawnReady(postgres, user);
    this.loadedHba = read;
    return server;
  }

  /** Clients that changed while it was down are in the file, maybe not in what the server read. */
  private restarted(): void {
    this.queueHbaChange().catch((error: Error) => this.events.log(`After the PostgreSQL add-on server restarted: ${error.message}`));
  }

  private async spawnReady(postgres: string, user: SystemUser): Promise<ServerProcess> {
    const layout = this.layout;
    await this.removeStaleLockFiles();
    const argv = postgresArgv(postgres, layout, this.options.listenAddresses, this.options.port, this.options.settings);
    const sandbox = this.options.sandbox;
    if (sandbox) sandbox.cgroups.create(sandbox.group, sandbox.limits);
    const server = await ServerProcess.spawn(this.label, {
      argv: sandbox ? sandboxedArgv(user, argv) : argv,
      user: sandbox ? undefined : user,
      cwd: layout.dataDir,
      logFile: layout.logFile,
      cgroupProcs: sandbox ? sandbox.cgroups.processGroup(sandbox.group) : undefined,
    });
    await this.waitReady(server);
    // Answering means postgres runs: whatever joined the groups before it ran is done.
    if (sandbox && !runsInSandbox(server.pid, sandbox.cgroups, sandbox.group, user)) {
      await server.stop('SIGINT', 10_000);
      throw new Error(`${this.label} did not start in its sandbox (control group ${sandbox.group}, user ${user.name}).`);
    }
    return server;
  }

  /**
   * A server adopted from an earlier daemon gets the plan's limits on its group again (a plan
   * changed since). A failure is told, not fatal: cgroup v1 refuses a limit below the current use.
   */
  private reapplyLimits(): void {
    const sandbox = this.options.sandbox;
    if (!sandbox) return;
    try {
      sandbox.cgroups.create(sandbox.group, sandbox.limits);
    } catch (error) {
      this.events.log(
        `Could not apply the plan's limits to ${this.label} now (${(error as Error).message}); they apply at its next start.`,
      );
    }
  }

  private async waitReady(server: ServerProcess): Promise<void> {
    const layout = this.layout;
    const admin = this.admin!;
    await waitUntilReady(
      server,
      () => canQuery(admin),
      this.options.startTimeoutMs ?? 60_000,
      async (reason) => {
        await server.stop('SIGINT', 10_000);
        return new Error(`${this.label} did not start: ${reason}. Last lines of ${layout.logFile}:\n` + (await logTail(layout.logFile)));
      },
    );
  }

  /**
   * A postmaster killed with -9 leaves postmaster.pid and the socket's lock file behind. When
   * the pid they name is a zombie nobody reaps (a container whose first process reaps no
   * orphans), PostgreSQL takes it for a live postmaster and refuses to start; files naming a
   * process that is not a postmaster of this cluster are removed. Old backends still attached
   * to the shared memory are caught by PostgreSQL's own check, which does not use these files.
   */
  private async removeStaleLockFiles(): Promise<void> {
    const layout = this.layout;
    for (const file of [join(layout.dataDir, 'postmaster.pid'), join(layout.socketDir, `.s.PGSQL.${this.options.port}.lock`)]) {
      const pid = await readPidFile(file);
      if (pid !== undefined && !(await isOurServer(pid, 'postgres', layout.dataDir))) await rm(file, { force: true });
    }
  }

  private async writeCurrentHba(): Promise<void> {
    const hba = this.hba();
    await writeHba(this.layout.hbaFile, hba);
    this.writtenHba = hba;
  }

  /**
   * Opens each database to exactly these sandbox addresses (and closes it to every other one):
   * pg_hba.conf is rewritten and, when the server runs, reloaded. Resolves once new connections
   * are checked against the new rules. Before start the rules are kept for it.
   */
  allowClients(clients: HbaClient[]): Promise<void> {
    this.hba({ clients }); // refuses bad input before anything changes
    this.clients = [...clients];
    this.clientsKnown = true;
    return this.queueHbaChange();
  }

  /** One change of the file at a time, each writing the latest clients. */
  private queueHbaChange(): Promise<void> {
    const change = this.hbaChanges.then(() => this.applyHba());
    this.hbaChanges = change.catch(() => undefined);
    return change;
  }

  private hba(change: { clients?: HbaClient[] } = {}): string {
    return hbaConf({
      hostAddresses: this.options.listenAddresses,
      appSubnet: this.options.appSubnet,
      clients: change.clients ?? this.clients,
    });
  }

  private async applyHba(): Promise<void> {
    const admin = this.admin;
    const hba = this.hba();
    if (!this.server?.isSupervised() || !admin || hba === this.loadedHba) return;
    // Until the daemon names the clients, the server keeps the file the previous daemon wrote.
    if (!this.clientsKnown && this.loadedHba !== undefined) return;
    const layout = this.layout;
    await this.writeCurrentHba();
    // Down between a crash and its restart: the restarted server reads the file written here.
    if (!this.server.isUp()) return;
    // A fresh backend reports when the postmaster last loaded its configuration: once that
    // moves, every new connection is checked against the new file.
    const before = await adminQuery(admin, async (c) => {
      const errors = await c.query<{ line_number: number; error: string }>(
        'SELECT line_number, error FROM pg_catalog.pg_hba_file_rules WHERE error IS NOT NULL',
      );
      if (errors.rows.length > 0) {
        throw new Error(
          `PostgreSQL rejects the pg_hba.conf slipway wrote (${errors.rows.map((r) => `line ${r.line_number}: ${r.error}`).join('; ')}); it keeps the rules it had. See ${layout.hbaFile}.`,
        );
      }
      const loaded = await confLoadTimeOf(c);
      await c.query('SELECT pg_catalog.pg_reload_conf()');
      return loaded;
    });
    const deadline = Date.now() + 10_000;
    while ((await confLoadTime(admin)) <= before) {
      if (Date.now() > deadline) throw new Error(`PostgreSQL did not reload ${layout.hbaFile} within 10 s; see ${layout.logFile}.`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    this.loadedHba = hba;
  }

  /**
   * Puts another data folder in place of the server's (a physical restore): `fill` lays the new
   * one out at the path it is given (a stopped, promoted copy owned by the server's account, on
   * the same file system); then the server stops (its sessions end), the folders are swapped and
   * it starts on the new one. If it does not start, the old folder is put back and started, and
   * the error is passed on. The WAL the copy wrote is handed to archiving (see markForArchiving).
   */
  async replaceData(fill: (incoming: string) => Promise<void>): Promise<void> {
    const layout = this.layout;
    const user = await this.serverAccount();
    const incoming = join(layout.root, 'data.incoming');
    const previous = join(layout.root, 'data.previous');
    await rm(incoming, { recursive: true, force: true });
    await rm(previous, { recursive: true, force: true });
    await fill(incoming);
    await markForArchiving(incoming, user);
    await this.stop();
    await rename(layout.dataDir, previous);
    await rename(incoming, layout.dataDir);
    try {
      await this.start();
    } catch (error) {
      await rm(incoming, { recursive: true, force: true });
      await rename(layout.dataDir, incoming);
      await rename(previous, layout.dataDir);
      await this.start();
      await rm(incoming, { recursive: true, force: true });
      throw error;
    }
    await rm(previous, { recursive: true, force: true });
  }

  /** Fast shutdown (SIGINT: open sessions are ended, data is safe), then SIGKILL after 30 s. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.loadedHba = undefined;
    await server?.stop('SIGINT', 30_000);
  }

  /** The daemon lets go: the server serves on, unwatched, and the next daemon adopts it. */
  detach(): void {
    this.server?.detach();
    this.server = undefined;
    this.loadedHba = undefined;
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
      await runChecked(initdbArgv(binaries.initdb, layout.dataDir, pwfile), {
        user: { uid: user.uid, gid: user.gid },
        cwd: layout.root,
        env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' },
      });
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
  private async adoptRunning(): Promise<ServerProcess | undefined> {
    const layout = this.layout;
    const pidFile = join(layout.dataDir, 'postmaster.pid');
    const pid = await readPidFile(pidFile);
    if (pid === undefined || !(await isOurServer(pid, 'postgres', layout.dataDir))) return undefined;
    const lines = (await readFile(pidFile, 'utf8')).split('\n');
    const server = ServerProcess.adopt(this.label, pid);
    if (Number(lines[3]) !== this.options.port) {
      // Listening on another port than configured: restart it with the current settings.
      await server.stop('SIGINT', 30_000);
      return undefined;
    }
    // Not signalled: it keeps the pg_hba.conf it loaded (see clientsKnown) until told otherwise.
    return server;
  }
}

/**
 * A restored copy runs without archiving, so the timeline history file its promotion wrote is
 * not marked for the archive: without it a later restore could not follow this timeline, or
 * would choose its number again. It gets its `.ready` mark, made by the server's account in its
 * own folder (root only lists the names). The segment the copy was writing in is finished and
 * archived by the server as usual; the rest of pg_wal (recycled segments) is not archive material.
 */
async function markForArchiving(dataDir: string, user: SystemUser): Promise<void> {
  const walDir = join(dataDir, 'pg_wal');
  const names = await readdir(walDir);
  const done = new Set(await readdir(join(walDir, 'archive_status')).catch(() => [] as string[]));
  const waiting = names.filter((n) => isWalFileName(n) && n.endsWith('.history') && !done.has(`${n}.done`) && !done.has(`${n}.ready`));
  if (waiting.length === 0) return;
  await runChecked(['touch', ...waiting.map((n) => join(walDir, 'archive_status', `${n}.ready`))], {
    user: { uid: user.uid, gid: user.gid },
    cwd: '/',
    env: { PATH: '/usr/bin:/bin' },
  });
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Replaced whole, so the server never reads half a file. */
async function writeHba(path: string, text: string): Promise<void> {
  await writeFile(`${path}.new`, text, { mode: 0o644 });
  await rename(`${path}.new`, path);
}

function adminQuery<T>(target: AdminTarget, use: (client: pg.Client) => Promise<T>): Promise<T> {
  return asSuperuser(target, use, { connectionTimeoutMillis: 5000 });
}

async function confLoadTime(target: AdminTarget): Promise<number> {
  return adminQuery(target, confLoadTimeOf);
}

async function confLoadTimeOf(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ t: string }>(
    "SELECT pg_catalog.date_part('epoch', pg_catalog.pg_conf_load_time())::pg_catalog.text AS t",
  );
  return Number(rows[0]!.t);
}

async function archiving(target: AdminTarget): Promise<boolean> {
  const mode = await adminQuery(target, (c) => c.query<{ mode: string }>(`SELECT pg_catalog.current_setting('archive_mode') AS mode`));
  return mode.rows[0]?.mode === 'on';
}

async function canQuery(target: AdminTarget): Promise<boolean> {
  return asSuperuser(
    target,
    async (client) => {
      await client.query('SELECT 1');
      return true;
    },
    { connectionTimeoutMillis: 2000 },
  );
}
