import pg from 'pg';

/**
 * The one way slipway opens a PostgreSQL connection as a superuser (or as the administrator of an
 * external server). A tenant owns its database: it can create functions and operators in its
 * schemas and set its database's `search_path`, so any superuser session inside it that resolved
 * an unqualified name through that path would run the tenant's code with superuser rights
 * (CVE-2018-1058). Two rules keep it out, and both hold for every statement sent here:
 *
 * - The search path is `pg_catalog` from the startup packet on. Options sent at connection start
 *   outrank `ALTER DATABASE … SET` and `ALTER ROLE … SET`, and nothing the tenant wrote runs
 *   before them, so no tenant function gets the chance to change it back.
 * - Every function and relation a statement names is written with its schema (pg_catalog.…), and
 *   the queries that run inside a tenant's database name their operators as
 *   `OPERATOR(pg_catalog.=)` too, as pg_dump does.
 */
export const PINNED_SEARCH_PATH = '-c search_path=pg_catalog';

/** The environment PostgreSQL's own programs (pg_dump, pg_amcheck…) get for the same pin. */
export function pinnedToolEnv(env: Record<string, string>): Record<string, string> {
  return { ...env, PGOPTIONS: PINNED_SEARCH_PATH };
}

/** A server reached as its superuser: connection settings, or an operator-given URL. */
export type SuperuserTarget = Omit<pg.ClientConfig, 'options'> | string;

/** The client settings for a pinned connection to `target` (its database, or the one given). */
export function pinnedClientConfig(target: SuperuserTarget, database?: string, connectionTimeoutMillis = 10_000): pg.ClientConfig {
  const base: pg.ClientConfig = typeof target === 'string' ? { connectionString: withoutOptions(target) } : { ...target };
  return {
    ...base,
    ...(database ? { database } : {}),
    connectionTimeoutMillis,
    // Last, so nothing in the target can replace it.
    options: PINNED_SEARCH_PATH,
  };
}

/** Opens one pinned connection, hands it over, and closes it whatever happens. */
export async function asSuperuser<T>(
  target: SuperuserTarget,
  use: (client: pg.Client) => Promise<T>,
  settings: { database?: string; connectionTimeoutMillis?: number } = {},
): Promise<T> {
  const client = new pg.Client(pinnedClientConfig(target, settings.database, settings.connectionTimeoutMillis));
  // A server restart must not crash the daemon: the query in flight rejects instead.
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await use(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** node-postgres lets a URL's own `options` replace the configured ones: an operator's URL keeps its other settings only. */
function withoutOptions(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.searchParams.has('options')) return url;
    parsed.searchParams.delete('options');
    return parsed.toString();
  } catch {
    return url;
  }
}
