import { createHash } from 'node:crypto';
import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SandboxCgroups } from '../../sandbox/cgroups.js';
import type { HbaClient } from '../../network/addon-access.js';
import type { PostgresqlPlanLimits } from '../plan-limits.js';
import { allocatePort, assertPortRange, type PortRange } from '../redis/port-allocation.js';
import { DEFAULT_POSTGRESQL_UID_RANGE, POSTGRESQL_SERVER_USERS, RedisServerUsers } from '../redis/server-users.js';
import type { SupervisionEvents } from '../server-supervisor.js';
import type { SystemUser } from '../system-user.js';
import { EmbeddedCluster, type AdminTarget } from './embedded-cluster.js';
import { serverSettings } from './server-settings.js';

/**
 * Five thousand ports for PostgreSQL add-ons, below the Redis add-ons' range and the kernel's
 * ephemeral ports. Each server listens on the gateway only, at a port of its own, opened per
 * linked app by src/network; slipway reaches it over its unix socket. Two daemons on one
 * machine have gateways of their own, so their servers never contend for a port.
 */
export const DEFAULT_POSTGRES_PORT_RANGE: PortRange = [15000, 19999];

export interface AddonServersOptions {
  /** `<data>/postgresql`: each add-on's server lives in `<root>/<add-on id>`. */
  root: string;
  gatewayAddress: string;
  /** The subnet sandboxes connect from (pg_hba.conf). */
  appSubnet: string;
  limits: PostgresqlPlanLimits;
  /** The control-group root the servers' groups live under (e.g. `slipway-addons`). */
  cgroupRoot: string;
  portRange?: PortRange;
  events(): SupervisionEvents;
}

/**
 * The PostgreSQL servers of the add-ons, one each: its own PGDATA in `<root>/<id>`, its own unix
 * user (`slp-…`, numbered apart from the apps' and the Redis servers'), its own control group
 * with the plan's memory and pids, its own port, and its settings sized by the plan
 * (server-settings.ts). Each is an EmbeddedCluster in a sandbox; this class creates, finds and
 * removes them.
 */
export class AddonServers {
  private readonly servers = new Map<string, EmbeddedCluster>();
  private readonly users = new RedisServerUsers(DEFAULT_POSTGRESQL_UID_RANGE, POSTGRESQL_SERVER_USERS);
  private cgroupsOf: SandboxCgroups | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly o: AddonServersOptions) {
    assertPortRange(this.portRange);
  }

  private get portRange(): PortRange {
    return this.o.portRange ?? DEFAULT_POSTGRES_PORT_RANGE;
  }

  get cgroups(): SandboxCgroups {
    this.cgroupsOf ??= new SandboxCgroups(this.o.cgroupRoot);
    return this.cgroupsOf;
  }

  /** The add-on's server user (created when missing). */
  userOf(id: string): Promise<SystemUser> {
    return this.users.ensure(id);
  }

  /** Folder of one add-on's server; the id comes from the store and is checked before it names a path. */
  folderOf(id: string): string {
    if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(id) || id === 'data' || id === 'run' || id === 'wal-spool') {
      throw new Error(`Add-on id "${id}" cannot name a folder (letters, digits, "_" and "-" only).`);
    }
    return join(this.o.root, id);
  }

  /** The server of an add-on (not started by this call). */
  serverOf(id: string, port: number): EmbeddedCluster {
    const known = this.servers.get(id);
    if (known && known.port === port) return known;
    const server = new EmbeddedCluster({
      root: this.folderOf(id),
      port,
      listenAddresses: [this.o.gatewayAddress],
      appSubnet: this.o.appSubnet,
      serverUser: '',
      user: () => this.users.ensure(id),
      sandbox: {
        cgroups: this.cgroups,
        group: postgresqlGroupName(id),
        limits: { memoryBytes: this.o.limits.memoryBytes, pids: this.o.limits.pids, cpuShares: 1024 },
      },
      settings: serverSettings(this.o.limits),
      label: `the PostgreSQL server of add-on ${id}`,
      addonId: id,
    });
    server.superviseWith(this.o.events());
    this.servers.set(id, server);
    return server;
  }

  /** A server already known to this daemon (resumed or created). */
  running(id: string): EmbeddedCluster | undefined {
    return this.servers.get(id);
  }

  all(): Array<[string, EmbeddedCluster]> {
    return [...this.servers.entries()];
  }

  /**
   * A new add-on's server: a port of its own, initdb, started and answering. A failure leaves
   * nothing behind (folder, group, user).
   */
  create(id: string): Promise<{ server: EmbeddedCluster; admin: AdminTarget }> {
    return this.serialized(async () => {
      const taken = new Set([...[...this.servers.values()].map((s) => s.port), ...(await this.portsOnDisk())]);
      const port = await allocatePort(this.portRange, taken, [this.o.gatewayAddress], 'PostgreSQL');
      const server = this.serverOf(id, port);
      try {
        const admin = await server.start();
        await writeFile(join(this.folderOf(id), 'port'), `${port}\n`, { mode: 0o644 });
        return { server, admin };
      } catch (error) {
        await this.remove(id).catch(() => undefined);
        throw error;
      }
    });
  }

  /** Stops the server for good and removes its folder, control group and user. */
  async remove(id: string): Promise<void> {
    const server = this.servers.get(id);
    this.servers.delete(id);
    await server?.stop();
    await rm(this.folderOf(id), { recursive: true, force: true });
    try {
      this.cgroups.remove(postgresqlGroupName(id));
    } catch {
      // no control groups here: nothing to remove
    }
    await this.users.remove(id);
  }

  /** Routes each sandbox's access to the server of the add-on whose database it names. */
  async allowClients(clients: HbaClient[], databaseOf: (id: string) => string | undefined): Promise<void> {
    await Promise.all(
      this.all().map(([id, server]) => {
        const database = databaseOf(id);
        return server.allowClients(clients.filter((c) => c.database === database));
      }),
    );
  }

  async stopAll(): Promise<void> {
    const servers = this.all();
    this.servers.clear();
    await Promise.all(servers.map(([, server]) => server.stop()));
    for (const [id] of servers) {
      try {
        this.cgroups.remove(postgresqlGroupName(id));
      } catch {
        // no control groups here
      }
    }
  }

  detachAll(): void {
    for (const [, server] of this.servers) server.detach();
    this.servers.clear();
  }

  superviseWith(events: SupervisionEvents): void {
    for (const [, server] of this.servers) server.superviseWith(events);
  }

  /** Ports named in the add-on folders: a server not running now keeps its port. */
  private async portsOnDisk(): Promise<number[]> {
    const ports: number[] = [];
    for (const entry of await readdir(this.o.root).catch(() => [] as string[])) {
      const text = await readFile(join(this.o.root, entry, 'port'), 'utf8').catch(() => '');
      const port = Number(text.trim());
      if (Number.isInteger(port) && port > 0) ports.push(port);
    }
    return ports;
  }

  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(work, work);
    this.queue = result.catch(() => undefined);
    return result;
  }
}

/** The control group of an add-on's server: `postgresql-` and its id's uuid (or its SHA-256 for other ids). */
export function postgresqlGroupName(addonId: string): string {
  const m = /^addon_([0-9a-f-]{36})$/.exec(addonId);
  return `postgresql-${m ? m[1] : createHash('sha256').update(addonId).digest('hex').slice(0, 40)}`;
}
