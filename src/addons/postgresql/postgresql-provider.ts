import { join } from 'node:path';
import type pg from 'pg';
import type { AddonProvider, AddonRecord, ProvisionResult } from '../provider.js';
import { assertAddressAssigned, bindAddresses, defaultSubnet } from '../gateway.js';
import { randomIdentifier, randomPassword, redact } from '../secrets.js';
import { EmbeddedCluster, type AdminTarget } from './embedded-cluster.js';
import { AddonServers } from './addon-servers.js';
import { assertTraversable } from '../directories.js';
import { DEFAULT_POSTGRESQL_UID_RANGE } from '../redis/server-users.js';
import { findPostgresBinaries } from './binaries.js';
import { describeServerSizing } from './server-settings.js';
import type { PortRange } from '../redis/port-allocation.js';
import { access, rename } from 'node:fs/promises';
import type { HbaClient } from '../../network/addon-access.js';
import { asSuperuser } from './superuser-connection.js';
import { quietSupervision, type SupervisionEvents } from '../server-supervisor.js';
import { assertAddonIdentifier, createDatabaseSql, createRoleSql, dropSql, roleLimitsSql } from './provisioning-sql.js';
import { type DatabaseSize, enforceDatabaseSizes } from './database-sizes.js';
import { DEFAULT_PLAN_LIMITS, describePostgresqlLimits, type PostgresqlPlanLimits } from '../plan-limits.js';

export const DEFAULT_POSTGRES_PORT = 5433;
export const DEFAULT_POSTGRES_USER = 'slipway-pg';

export interface PostgresqlProviderOptions {
  /** slipway's data folder; the embedded cluster lives in `<dataDir>/postgresql`. */
  dataDir: string;
  /** Address apps reach the host at (the instance bridge's); injected as POSTGRESQL_ADDON_HOST. */
  gatewayAddress: string;
  /** Port of the embedded cluster; 5433 so a system PostgreSQL on 5432 keeps its port. */
  port?: number;
  /** Subnet apps connect from; defaults to the /16 around the gateway. */
  appSubnet?: string;
  /** Use this server instead of the embedded one: an admin URL postgresql://user:pw@host:port/db. */
  externalUrl?: string;
  /** System account of the embedded server. */
  serverUser?: string;
  /** The plan's limits on each add-on's role and server (plan-limits.ts). */
  limits?: PostgresqlPlanLimits;
  /** The control-group root the add-on servers' groups live under (default `slipway-addons`). */
  cgroupRoot?: string;
  /** Ports handed to the add-ons' own servers, both ends included. */
  portRange?: PortRange;
}

type Mode = 'embedded' | 'external';

/**
 * Where an add-on's database lives, as its stored config says (`mode`): `dedicated`, a server of
 * its own (every add-on made since servers are per add-on); `embedded`, the one cluster shared
 * by the add-ons made before (kept running while such add-ons exist); `external`, the
 * operator's server.
 */
type Placement = 'dedicated' | 'embedded' | 'external';

/**
 * A PostgreSQL server of its own per add-on (addon-servers.ts), with one database and one login
 * role for the app; or, given an external server, a database and a role on it.
 */
export class PostgresqlProvider implements AddonProvider {
  readonly name = 'postgresql';
  readonly description = 'PostgreSQL: a server of its own, with a database and a role for the app';
  /** The cluster shared by add-ons made before servers were per add-on; started only while its data exists. */
  readonly cluster: EmbeddedCluster | undefined;
  /** The add-ons' own servers (embedded mode). */
  readonly servers: AddonServers | undefined;
  private readonly mode: Mode;
  private starting: Promise<AdminTarget | string | undefined> | undefined;
  private version: string | undefined;
  /** Whether slipway's admin role is a superuser (temp_file_limit needs one). */
  private superuser = false;
  private events: SupervisionEvents = quietSupervision;
  /** The database of each add-on with a server of its own, by add-on id. */
  private readonly databases = new Map<string, string>();

  constructor(private readonly options: PostgresqlProviderOptions) {
    this.mode = options.externalUrl ? 'external' : 'embedded';
    if (options.externalUrl) parseExternalUrl(options.externalUrl); // fail at construction on a bad URL
    const appSubnet = options.appSubnet ?? defaultSubnet(options.gatewayAddress);
    this.cluster =
      this.mode === 'embedded'
        ? new EmbeddedCluster({
            root: join(options.dataDir, 'postgresql'),
            port: this.port,
            listenAddresses: bindAddresses(options.gatewayAddress),
            appSubnet,
            serverUser: options.serverUser ?? DEFAULT_POSTGRES_USER,
          })
        : undefined;
    this.servers =
      this.mode === 'embedded'
        ? new AddonServers({
            root: join(options.dataDir, 'postgresql'),
            gatewayAddress: options.gatewayAddress,
            appSubnet,
            limits: this.plan,
            cgroupRoot: options.cgroupRoot ?? 'slipway-addons',
            portRange: options.portRange,
            events: () => this.events,
          })
        : undefined;
  }

  private get plan(): PostgresqlPlanLimits {
    return this.options.limits ?? DEFAULT_PLAN_LIMITS.postgresql;
  }

  get limits(): string {
    const limits = describePostgresqlLimits(this.plan);
    return this.mode === 'embedded' ? `${limits}; ${describeServerSizing(this.plan)}` : limits;
  }

  private get port(): number {
    return this.options.port ?? DEFAULT_POSTGRES_PORT;
  }

  start(): Promise<void> {
    if (!this.starting) {
      this.starting = this.bringUp().catch((err) => {
        this.starting = undefined;
        throw err;
      });
    }
    return this.starting.then(() => undefined);
  }

  /**
   * Embedded: the binaries are there and the gateway is up; the shared cluster of earlier
   * versions starts only when its data folder exists (its add-ons live there). External: the
   * server answers.
   */
  private async bringUp(): Promise<AdminTarget | string | undefined> {
    let admin: AdminTarget | string;
    if (this.cluster) {
      await assertAddressAssigned(this.options.gatewayAddress);
      const binaries = await findPostgresBinaries();
      this.version = String(binaries.major);
      // Each add-on's server runs as a user of its own, none a member of the folder's group:
      // the data folder must be enterable by others, checked now rather than at the first add-on.
      const anyServerUser = {
        name: "slp-… (each add-on server's user)",
        uid: DEFAULT_POSTGRESQL_UID_RANGE.last,
        gid: DEFAULT_POSTGRESQL_UID_RANGE.last,
      };
      await assertTraversable(this.options.dataDir, anyServerUser);
      this.superuser = true;
      if (!(await exists(join(this.cluster.layout.dataDir, 'PG_VERSION')))) return undefined;
      admin = await this.cluster.start();
    } else {
      admin = this.options.externalUrl!;
    }
    const rows = await withClient(admin, (c) =>
      c.query<{ v: string; su: string }>(
        `SELECT pg_catalog.current_setting('server_version_num') AS v, pg_catalog.current_setting('is_superuser') AS su`,
      ),
    );
    this.version = String(Math.floor(Number(rows.rows[0]!.v) / 10000));
    this.superuser = rows.rows[0]!.su === 'on';
    return admin;
  }

  private async adminTarget(): Promise<AdminTarget | string> {
    if (!this.starting) throw new Error('The postgresql add-on provider is not started: call start() first.');
    const admin = await this.starting;
    if (!admin) throw new Error('No shared PostgreSQL cluster runs here: every PostgreSQL add-on has a server of its own.');
    return admin;
  }

  /** Whether the shared cluster of earlier versions runs (it holds add-ons not moved yet). */
  async sharedClusterRuns(): Promise<boolean> {
    return (await this.starting?.catch(() => undefined)) !== undefined && this.mode === 'embedded';
  }

  async provision(addon: AddonRecord): Promise<ProvisionResult> {
    if (this.servers) return this.provisionServer(addon);
    const admin = await this.adminTarget();
    const role = randomIdentifier('addon_');
    const password = randomPassword();
    try {
      await this.createRoleAndDatabase(admin, role, password, role);
    } catch (err) {
      await withClient(admin, async (client) => {
        for (const statement of dropSql(role, role)) await client.query(statement);
      }).catch(() => undefined);
      throw new Error(`Could not create the PostgreSQL database and role: ${describe(err, password)}`);
    }
    const external = this.options.externalUrl ? parseExternalUrl(this.options.externalUrl) : undefined;
    return {
      config: {
        mode: this.mode,
        database: role,
        role,
        password,
        host: external ? this.appHost(external.hostname) : this.options.gatewayAddress,
        port: String(external ? external.port : this.port),
        version: this.version!,
      },
    };
  }

  /** A server of the add-on's own, with its database and role in it; nothing is left if a step fails. */
  private async provisionServer(addon: AddonRecord): Promise<ProvisionResult> {
    if (!this.starting) throw new Error('The postgresql add-on provider is not started: call start() first.');
    await this.starting;
    const servers = this.servers!;
    const role = randomIdentifier('addon_');
    const password = randomPassword();
    const { server, admin } = await servers.create(addon.id);
    try {
      await this.createRoleAndDatabase(admin, role, password, role);
    } catch (err) {
      await servers.remove(addon.id).catch(() => undefined);
      throw new Error(`Could not create the PostgreSQL database and role: ${describe(err, password)}`);
    }
    this.databases.set(addon.id, role);
    return {
      config: {
        mode: 'dedicated',
        database: role,
        role,
        password,
        port: String(server.port),
        version: String(server.major ?? this.version),
      },
    };
  }

  env(config: Record<string, string>): Record<string, string> {
    // Servers slipway runs follow the current gateway even if it changed since.
    const placement = placementOf(config);
    const host = placement === 'external' ? need(config, 'host') : this.options.gatewayAddress;
    const port = placement === 'embedded' ? String(this.port) : need(config, 'port');
    const user = need(config, 'role');
    const password = need(config, 'password');
    const db = need(config, 'database');
    return {
      POSTGRESQL_ADDON_HOST: host,
      POSTGRESQL_ADDON_PORT: port,
      POSTGRESQL_ADDON_DB: db,
      POSTGRESQL_ADDON_USER: user,
      POSTGRESQL_ADDON_PASSWORD: password,
      POSTGRESQL_ADDON_URI: `postgresql://${encodeURIComponent(user)}:${encodeURIComponent(password)}@${hostForUri(host)}:${port}/${encodeURIComponent(db)}`,
      POSTGRESQL_ADDON_VERSION: config.version ?? this.version ?? '',
    };
  }

  /**
   * Opens each database of the embedded server only to the sandbox addresses given (those of
   * the apps linked to it). An external server's access rules are its administrator's.
   */
  async allowClients(clients: HbaClient[]): Promise<void> {
    await Promise.all([this.cluster?.allowClients(clients), this.servers?.allowClients(clients, (id) => this.databases.get(id))]);
  }

  /**
   * The server is shared: what is per add-on is its role's limits, applied again so a role
   * made before they existed (or before the plan's figures changed) gets them.
   */
  async resume(addon: Pick<AddonRecord, 'id'>, config: Record<string, string>): Promise<void> {
    this.assertSameMode(config);
    await this.start();
    const role = need(config, 'role');
    const admin = placementOf(config) === 'dedicated' ? await this.resumeServer(addon.id, config) : await this.adminTarget();
    try {
      await withClient(admin, async (client) => {
        for (const statement of this.limitsSql(role)) await client.query(statement);
      });
    } catch (err) {
      throw new Error(`Could not apply the plan's limits to the PostgreSQL role ${role}: ${describe(err, config.password)}`);
    }
  }

  /** Starts the add-on's server again, or adopts it where an earlier daemon left it running. */
  private async resumeServer(id: string, config: Record<string, string>): Promise<AdminTarget> {
    const server = this.servers!.serverOf(id, portOf(config));
    this.databases.set(id, need(config, 'database'));
    return server.start();
  }

  /**
   * For an add-on of the shared cluster being moved: a server of its own with the add-on's role
   * (same name and password, the plan's limits) and its empty database, and the configuration
   * that names it. A server left by a move that was cut short is removed first. Nothing is
   * switched: the caller copies the data, then stores the configuration.
   */
  async prepareOwnServer(id: string, config: Record<string, string>): Promise<{ server: EmbeddedCluster; config: Record<string, string> }> {
    if (placementOf(config) !== 'embedded' || !this.servers) throw new Error(`The add-on ${id} is not on the shared PostgreSQL cluster.`);
    const database = need(config, 'database');
    const role = need(config, 'role');
    const password = need(config, 'password');
    assertAddonIdentifier(database);
    assertAddonIdentifier(role);
    await this.servers.remove(id);
    const { server, admin } = await this.servers.create(id);
    try {
      await this.createRoleAndDatabase(admin, role, password, database);
    } catch (err) {
      await this.servers.remove(id).catch(() => undefined);
      throw new Error(`Could not prepare the PostgreSQL server of add-on ${id}: ${describe(err, password)}`);
    }
    this.databases.set(id, database);
    return {
      server,
      config: { mode: 'dedicated', database, role, password, port: String(server.port), version: String(server.major ?? this.version) },
    };
  }

  /** A move given up: the add-on's own server goes, the add-on stays on the shared cluster. */
  async abandonOwnServer(id: string): Promise<void> {
    this.databases.delete(id);
    await this.servers?.remove(id);
  }

  /**
   * Once no add-on is left on the shared cluster: it stops, and its data folder is renamed so
   * that no later start brings it up again; the folder is kept for the operator to remove.
   */
  async retireSharedCluster(): Promise<string | undefined> {
    const cluster = this.cluster;
    if (!cluster || !(await exists(join(cluster.layout.dataDir, 'PG_VERSION')))) return undefined;
    await cluster.stop();
    const kept = join(cluster.layout.root, `shared-cluster-moved-${new Date().toISOString().slice(0, 10)}`);
    await rename(cluster.layout.dataDir, kept);
    this.starting = Promise.resolve(undefined);
    return kept;
  }

  /** The running server of an add-on with one of its own (backups reach it so). */
  serverOfAddon(id: string, config: Record<string, string>): EmbeddedCluster | undefined {
    if (placementOf(config) !== 'dedicated' || !this.servers) return undefined;
    return this.servers.serverOf(id, portOf(config));
  }

  /** The add-on's login role with the plan's limits, and its database owned by it. */
  private async createRoleAndDatabase(admin: AdminTarget | string, role: string, password: string, database: string): Promise<void> {
    await withClient(admin, async (client) => {
      await client.query(createRoleSql(role, password));
      for (const statement of this.limitsSql(role)) await client.query(statement);
      for (const statement of createDatabaseSql(database, role)) await client.query(statement);
    });
  }

  private limitsSql(role: string): string[] {
    return roleLimitsSql(role, this.plan, this.superuser);
  }

  async deprovision(addon: Pick<AddonRecord, 'id'>, config: Record<string, string>): Promise<void> {
    this.assertSameMode(config);
    if (placementOf(config) === 'dedicated') {
      this.databases.delete(addon.id);
      try {
        await this.servers!.remove(addon.id);
      } catch (err) {
        throw new Error(`Could not remove the PostgreSQL server of add-on ${addon.id}: ${describe(err, config.password)}`);
      }
      return;
    }
    const database = need(config, 'database');
    const role = need(config, 'role');
    assertAddonIdentifier(database);
    assertAddonIdentifier(role);
    const admin = await this.adminTarget();
    try {
      await withClient(admin, async (client) => {
        for (const statement of dropSql(database, role)) await client.query(statement);
      });
    } catch (err) {
      throw new Error(`Could not drop the PostgreSQL database ${database} and role ${role}: ${describe(err, config.password)}`);
    }
  }

  /** Sizes checked at the previous check, to see a read-only database still growing. */
  private readonly sizesSeen = new Map<string, number>();

  /**
   * Checks the add-ons' databases against the plan's size (database-sizes.ts): over it,
   * read-only by default with their sessions ended; below it again, writable. Only on a
   * server this daemon runs or was given; the caller passes the databases of its add-ons.
   */
  async checkDatabaseSizes(databases: string[]): Promise<DatabaseSize[]> {
    if (databases.length === 0 || !this.starting) return [];
    const limit = this.plan.databaseSizeBytes;
    const sizes: DatabaseSize[] = [];
    const own = new Map([...this.databases.entries()].map(([id, database]) => [database, id]));
    for (const [database, id] of own) {
      const server = this.servers?.running(id);
      if (!databases.includes(database) || !server?.adminTarget) continue;
      sizes.push(...(await withClient(server.adminTarget, (client) => enforceDatabaseSizes(client, [database], limit, this.sizesSeen))));
    }
    const shared = databases.filter((d) => !own.has(d));
    const admin = shared.length > 0 ? await this.starting : undefined;
    if (admin) sizes.push(...(await withClient(admin, (client) => enforceDatabaseSizes(client, shared, limit, this.sizesSeen))));
    return sizes;
  }

  get databaseSizeLimit(): number {
    return this.plan.databaseSizeBytes;
  }

  async stop(): Promise<void> {
    const starting = this.starting;
    this.starting = undefined;
    await starting?.catch(() => undefined);
    await Promise.all([this.cluster?.stop(), this.servers?.stopAll()]);
  }

  /** The embedded servers serve on; the next daemon's start() and resume() adopt them. */
  async detach(): Promise<void> {
    const starting = this.starting;
    this.starting = undefined;
    await starting?.catch(() => undefined);
    this.cluster?.detach();
    this.servers?.detachAll();
  }

  /** An external server is its administrator's to restart: only the embedded ones are watched. */
  superviseWith(events: SupervisionEvents): void {
    this.events = events;
    this.cluster?.superviseWith(events);
    this.servers?.superviseWith(events);
  }

  private assertSameMode(config: Record<string, string>): void {
    const placement = placementOf(config);
    if ((placement === 'external') !== (this.mode === 'external')) {
      throw new Error(
        `This add-on lives on the ${config.mode ?? 'unknown'} PostgreSQL server, but slipway now uses the ${this.mode} one. ` +
          `Restore the previous PostgreSQL setting to manage it.`,
      );
    }
  }

  /** Apps cannot reach the host's loopback from their namespaces: give them the gateway instead. */
  private appHost(hostname: string): string {
    const bare = hostname.replace(/^\[|\]$/g, '');
    return bare === 'localhost' || bare.startsWith('127.') || bare === '::1' ? this.options.gatewayAddress : bare;
  }
}

function parseExternalUrl(url: string): { hostname: string; port: number } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error('The external PostgreSQL URL is not a valid URL; expected postgresql://admin:password@host:5432/postgres.');
  }
  if (parsed.protocol !== 'postgresql:' && parsed.protocol !== 'postgres:') {
    throw new Error(`The external PostgreSQL URL must start with postgresql:// (saw ${parsed.protocol}//).`);
  }
  return { hostname: parsed.hostname, port: parsed.port ? Number(parsed.port) : 5432 };
}

/** Every statement the provider sends goes through a pinned superuser connection. */
function withClient<T>(target: AdminTarget | string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  return asSuperuser(target, use);
}

function placementOf(config: Record<string, string>): Placement {
  return config.mode === 'dedicated' || config.mode === 'external' ? config.mode : 'embedded';
}

function portOf(config: Record<string, string>): number {
  const port = Number(need(config, 'port'));
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error('The stored PostgreSQL add-on configuration has no valid port.');
  return port;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

function need(config: Record<string, string>, key: string): string {
  const value = config[key];
  if (!value) throw new Error(`The stored PostgreSQL add-on configuration has no "${key}"; it may be from another provider.`);
  return value;
}

function hostForUri(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

function describe(err: unknown, ...secrets: Array<string | undefined>): string {
  return redact(err instanceof Error ? err.message : String(err), secrets);
}
