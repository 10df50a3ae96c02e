import { join } from 'node:path';
import type pg from 'pg';
import type { AddonProvider, AddonRecord, ProvisionResult } from '../provider.js';
import { assertAddressAssigned, bindAddresses, defaultSubnet } from '../gateway.js';
import { randomIdentifier, randomPassword, redact } from '../secrets.js';
import { EmbeddedCluster, type AdminTarget } from './embedded-cluster.js';
import type { HbaClient } from '../../network/addon-access.js';
import { asSuperuser } from './superuser-connection.js';
import type { SupervisionEvents } from '../server-supervisor.js';
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
  /** The plan's limits on each add-on's role (plan-limits.ts). */
  limits?: PostgresqlPlanLimits;
}

type Mode = 'embedded' | 'external';

/** One database and one login role per add-on on a shared server. */
export class PostgresqlProvider implements AddonProvider {
  readonly name = 'postgresql';
  readonly description = "PostgreSQL: a database and a role of its own on the platform's PostgreSQL server";
  readonly cluster: EmbeddedCluster | undefined;
  private readonly mode: Mode;
  private starting: Promise<AdminTarget | string> | undefined;
  private version: string | undefined;
  /** Whether slipway's admin role is a superuser (temp_file_limit needs one). */
  private superuser = false;

  constructor(private readonly options: PostgresqlProviderOptions) {
    this.mode = options.externalUrl ? 'external' : 'embedded';
    if (options.externalUrl) parseExternalUrl(options.externalUrl); // fail at construction on a bad URL
    this.cluster =
      this.mode === 'embedded'
        ? new EmbeddedCluster({
            root: join(options.dataDir, 'postgresql'),
            port: this.port,
            listenAddresses: bindAddresses(options.gatewayAddress),
            appSubnet: options.appSubnet ?? defaultSubnet(options.gatewayAddress),
            serverUser: options.serverUser ?? DEFAULT_POSTGRES_USER,
          })
        : undefined;
  }

  get limits(): string {
    return describePostgresqlLimits(this.options.limits ?? DEFAULT_PLAN_LIMITS.postgresql);
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

  private async bringUp(): Promise<AdminTarget | string> {
    let admin: AdminTarget | string;
    if (this.cluster) {
      await assertAddressAssigned(this.options.gatewayAddress);
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
    return this.starting;
  }

  async provision(_addon: AddonRecord): Promise<ProvisionResult> {
    const admin = await this.adminTarget();
    const role = randomIdentifier('addon_');
    const password = randomPassword();
    try {
      await withClient(admin, async (client) => {
        await client.query(createRoleSql(role, password));
        for (const statement of this.limitsSql(role)) await client.query(statement);
        for (const statement of createDatabaseSql(role, role)) await client.query(statement);
      });
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

  env(config: Record<string, string>): Record<string, string> {
    // The embedded server follows the current gateway and port even if they changed since.
    const host = config.mode === 'embedded' ? this.options.gatewayAddress : need(config, 'host');
    const port = config.mode === 'embedded' ? String(this.port) : need(config, 'port');
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
    await this.cluster?.allowClients(clients);
  }

  /**
   * The server is shared: what is per add-on is its role's limits, applied again so a role
   * made before they existed (or before the plan's figures changed) gets them.
   */
  async resume(_addon: Pick<AddonRecord, 'id'>, config: Record<string, string>): Promise<void> {
    this.assertSameMode(config);
    await this.start();
    const role = need(config, 'role');
    const admin = await this.adminTarget();
    try {
      await withClient(admin, async (client) => {
        for (const statement of this.limitsSql(role)) await client.query(statement);
      });
    } catch (err) {
      throw new Error(`Could not apply the plan's limits to the PostgreSQL role ${role}: ${describe(err, config.password)}`);
    }
  }

  private limitsSql(role: string): string[] {
    return roleLimitsSql(role, this.options.limits ?? DEFAULT_PLAN_LIMITS.postgresql, this.superuser);
  }

  async deprovision(_addon: Pick<AddonRecord, 'id'>, config: Record<string, string>): Promise<void> {
    this.assertSameMode(config);
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
    const admin = await this.adminTarget();
    const limit = (this.options.limits ?? DEFAULT_PLAN_LIMITS.postgresql).databaseSizeBytes;
    return withClient(admin, (client) => enforceDatabaseSizes(client, databases, limit, this.sizesSeen));
  }

  get databaseSizeLimit(): number {
    return (this.options.limits ?? DEFAULT_PLAN_LIMITS.postgresql).databaseSizeBytes;
  }

  async stop(): Promise<void> {
    const starting = this.starting;
    this.starting = undefined;
    await starting?.catch(() => undefined);
    await this.cluster?.stop();
  }

  /** The embedded server serves on; the next daemon's start() adopts it. */
  async detach(): Promise<void> {
    const starting = this.starting;
    this.starting = undefined;
    await starting?.catch(() => undefined);
    this.cluster?.detach();
  }

  /** An external server is its administrator's to restart: only the embedded one is watched. */
  superviseWith(events: SupervisionEvents): void {
    this.cluster?.superviseWith(events);
  }

  private assertSameMode(config: Record<string, string>): void {
    if (config.mode !== this.mode) {
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
