/**
 * What each add-on plan allows one tenant to use of the add-on servers, so that one add-on
 * cannot starve the others: the figures below are the product's, documented in
 * src/addons/README.md ("Plan limits") and shown by `slipway addon providers`. An operator
 * may change them for the whole platform with SLIPWAY_ADDON_PLAN_LIMITS (a JSON object of the
 * same shape, every field optional), e.g. to give a small machine smaller Redis servers.
 */
import { humanSize } from '../shared/human-size.js';

const MiB = 1024 * 1024;

export interface RedisPlanLimits {
  /** `maxmemory`: the data set Redis keeps before it applies `evictionPolicy`. */
  maxmemoryBytes: number;
  /**
   * What Redis does at maxmemory. `noeviction` refuses writes with an OOM error and keeps
   * every key: a Redis add-on persists its data (AOF), so dropping keys silently is not a
   * default an app would expect.
   */
  evictionPolicy: EvictionPolicy;
  /**
   * The control group's memory limit for the server's processes: maxmemory plus room for the
   * fork that writes the RDB and rewrites the AOF (copy-on-write pages), client buffers and
   * Redis' own overhead. The kernel holds it even if an app raises maxmemory.
   */
  memoryBytes: number;
  /** Processes and threads of the server at once (redis-server uses a handful). */
  pids: number;
  /**
   * Whether apps may run Lua (EVAL, EVALSHA, SCRIPT, FUNCTION, FCALL and their _RO forms). Off:
   * a script runs inside the server with no bound of its own, and it is the largest part of
   * Redis an app can drive (its CVEs are mostly there); redis-config.ts refuses the commands.
   */
  scripting: boolean;
}

export interface PostgresqlPlanLimits {
  /** `ALTER ROLE … CONNECTION LIMIT`: sessions the add-on's role may hold at once. */
  connectionLimit: number;
  /** `statement_timeout` of the role, in milliseconds: a longer statement is cancelled. */
  statementTimeoutMs: number;
  /** `temp_file_limit` of the role, in kB: temporary files one session may write (sorts, hashes). */
  tempFileLimitKb: number;
  /**
   * The database's size (`pg_database_size`): over it, the database becomes read-only by
   * default and its sessions are ended, until it is below again (postgresql/database-sizes.ts).
   */
  databaseSizeBytes: number;
  /**
   * The add-on's own server (one per add-on): memory of its control group, which also sizes
   * shared_buffers, work_mem and the other memory settings (postgresql/server-settings.ts).
   */
  memoryBytes: number;
  /** Processes of the server at once: one per connection plus its background workers. */
  pids: number;
}

export interface PlanLimits {
  redis: RedisPlanLimits;
  postgresql: PostgresqlPlanLimits;
}

export const EVICTION_POLICIES = [
  'noeviction',
  'allkeys-lru',
  'allkeys-lfu',
  'allkeys-random',
  'volatile-lru',
  'volatile-lfu',
  'volatile-random',
  'volatile-ttl',
] as const;
export type EvictionPolicy = (typeof EVICTION_POLICIES)[number];

/** The figures of the one plan of each provider (`s_mono`, `dev`). */
export const DEFAULT_PLAN_LIMITS: PlanLimits = {
  redis: { maxmemoryBytes: 128 * MiB, evictionPolicy: 'noeviction', memoryBytes: 320 * MiB, pids: 64, scripting: false },
  postgresql: {
    connectionLimit: 5,
    statementTimeoutMs: 30_000,
    tempFileLimitKb: 256 * 1024,
    databaseSizeBytes: 256 * MiB,
    memoryBytes: 256 * MiB,
    pids: 64,
  },
};

/** Parses SLIPWAY_ADDON_PLAN_LIMITS over the defaults; a bad value is refused naming the field. */
export function parsePlanLimits(text: string | undefined): PlanLimits {
  if (text === undefined || text.trim() === '') return DEFAULT_PLAN_LIMITS;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error('SLIPWAY_ADDON_PLAN_LIMITS is not JSON; expected e.g. {"redis":{"maxmemoryBytes":67108864}}.');
  }
  const top = object(raw, 'SLIPWAY_ADDON_PLAN_LIMITS');
  unknownKeys(top, ['redis', 'postgresql'], 'SLIPWAY_ADDON_PLAN_LIMITS');
  const redisIn = top.redis === undefined ? {} : object(top.redis, 'SLIPWAY_ADDON_PLAN_LIMITS.redis');
  const pgIn = top.postgresql === undefined ? {} : object(top.postgresql, 'SLIPWAY_ADDON_PLAN_LIMITS.postgresql');
  unknownKeys(redisIn, Object.keys(DEFAULT_PLAN_LIMITS.redis), 'SLIPWAY_ADDON_PLAN_LIMITS.redis');
  unknownKeys(pgIn, Object.keys(DEFAULT_PLAN_LIMITS.postgresql), 'SLIPWAY_ADDON_PLAN_LIMITS.postgresql');
  const d = DEFAULT_PLAN_LIMITS;
  const policy = redisIn.evictionPolicy ?? d.redis.evictionPolicy;
  if (!(EVICTION_POLICIES as readonly unknown[]).includes(policy)) {
    throw new Error(`SLIPWAY_ADDON_PLAN_LIMITS.redis.evictionPolicy must be one of ${EVICTION_POLICIES.join(', ')}.`);
  }
  const redis: RedisPlanLimits = {
    maxmemoryBytes: integer(redisIn.maxmemoryBytes, d.redis.maxmemoryBytes, MiB, 'redis.maxmemoryBytes'),
    evictionPolicy: policy as EvictionPolicy,
    memoryBytes: integer(redisIn.memoryBytes, d.redis.memoryBytes, 16 * MiB, 'redis.memoryBytes'),
    pids: integer(redisIn.pids, d.redis.pids, 8, 'redis.pids'),
    scripting: boolean(redisIn.scripting, d.redis.scripting, 'redis.scripting'),
  };
  if (redis.memoryBytes < redis.maxmemoryBytes + 16 * MiB) {
    throw new Error(
      'SLIPWAY_ADDON_PLAN_LIMITS: redis.memoryBytes must leave at least 16 MiB above redis.maxmemoryBytes for Redis itself and its forks.',
    );
  }
  const postgresql: PostgresqlPlanLimits = {
    connectionLimit: integer(pgIn.connectionLimit, d.postgresql.connectionLimit, 1, 'postgresql.connectionLimit'),
    statementTimeoutMs: integer(pgIn.statementTimeoutMs, d.postgresql.statementTimeoutMs, 100, 'postgresql.statementTimeoutMs'),
    tempFileLimitKb: integer(pgIn.tempFileLimitKb, d.postgresql.tempFileLimitKb, 1024, 'postgresql.tempFileLimitKb'),
    // An empty database takes about 8 MiB.
    databaseSizeBytes: integer(pgIn.databaseSizeBytes, d.postgresql.databaseSizeBytes, 16 * MiB, 'postgresql.databaseSizeBytes'),
    // Below 64 MiB a server with its background workers and a few sessions is killed for memory.
    memoryBytes: integer(pgIn.memoryBytes, d.postgresql.memoryBytes, 64 * MiB, 'postgresql.memoryBytes'),
    pids: integer(pgIn.pids, d.postgresql.pids, 16, 'postgresql.pids'),
  };
  return { redis, postgresql };
}

/** One line for the plans listing (`slipway addon providers`). */
export function describeRedisLimits(r: RedisPlanLimits): string {
  return `maxmemory ${humanSize(r.maxmemoryBytes)} (${r.evictionPolicy}), ${humanSize(r.memoryBytes)} of memory for the server in all, Lua scripting ${r.scripting ? 'on' : 'off'}`;
}

export function describePostgresqlLimits(p: PostgresqlPlanLimits): string {
  return (
    `a server of its own with ${humanSize(p.memoryBytes)} of memory, ${p.connectionLimit} connections, ` +
    `${humanSize(p.databaseSizeBytes)} of data, statements up to ${p.statementTimeoutMs / 1000} s, ` +
    `${humanSize(p.tempFileLimitKb * 1024)} of temporary files per session`
  );
}

function object(value: unknown, where: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${where} must be a JSON object.`);
  return value as Record<string, unknown>;
}

function unknownKeys(value: Record<string, unknown>, known: string[], where: string): void {
  const extra = Object.keys(value).filter((k) => !known.includes(k));
  if (extra.length) throw new Error(`${where} has unknown field(s) ${extra.join(', ')}; known: ${known.join(', ')}.`);
}

function boolean(value: unknown, fallback: boolean, name: string): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new Error(`SLIPWAY_ADDON_PLAN_LIMITS.${name} must be true or false.`);
  return value;
}

function integer(value: unknown, fallback: number, min: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new Error(`SLIPWAY_ADDON_PLAN_LIMITS.${name} must be a whole number of at least ${min}.`);
  }
  return value;
}
