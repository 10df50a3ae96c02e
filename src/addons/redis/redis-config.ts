import { EVICTION_POLICIES, type EvictionPolicy } from '../plan-limits.js';

/**
 * Pure builders for a per-add-on redis-server. The password lives in the config file (mode
 * 0600, server user), never on the command line where `ps` would show it.
 */

export interface RedisInstanceSettings {
  bind: string[];
  port: number;
  password: string;
  /** The add-on's folder: data, AOF, pid file; redis-server chdirs into it. */
  dir: string;
  /** The plan's data set size, and what Redis does once it is reached (plan-limits.ts). */
  maxmemoryBytes?: number;
  evictionPolicy?: EvictionPolicy;
}

/** Quotes a value for redis.conf: double quotes, with backslash escapes for `\` and `"`. */
export function quoteConfigValue(value: string): string {
  if (/[\x00-\x1f\x7f]/.test(value)) {
    throw new Error('A Redis configuration value may not contain control characters.');
  }
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The snapshot file redis-server writes in its `dir` (BGSAVE, SIGTERM); backups take it from there. */
export const RDB_FILE_NAME = 'dump.rdb';

export function redisConf(settings: RedisInstanceSettings): string {
  const q = quoteConfigValue;
  return [
    '# Written by slipway for one add-on; rewritten on every start.',
    `bind ${settings.bind.join(' ')}`,
    `port ${settings.port}`,
    'protected-mode yes',
    `requirepass ${q(settings.password)}`,
    `dir ${q(settings.dir)}`,
    `pidfile ${q(`${settings.dir}/redis.pid`)}`,
    'daemonize no',
    'logfile ""',
    // Every write goes to the AOF (fsync each second) and SIGTERM also writes an RDB, so a
    // restart of the add-on keeps its data.
    'appendonly yes',
    'appendfsync everysec',
    'save 3600 1 300 100 60 10000',
    `dbfilename ${RDB_FILE_NAME}`,
    // Apps hold the password; these stop them from turning CONFIG/DEBUG/MODULE into file writes.
    'enable-protected-configs no',
    'enable-debug-command no',
    'enable-module-command no',
    'always-show-logo no',
    ...memoryLines(settings),
    '',
  ].join('\n');
}

/**
 * maxmemory is what Redis counts of its data set; the control group around the server
 * (server-sandbox.ts) holds its whole memory, forks included, even if an app raises maxmemory
 * with CONFIG SET.
 */
function memoryLines(settings: RedisInstanceSettings): string[] {
  if (settings.maxmemoryBytes === undefined) return [];
  if (!Number.isSafeInteger(settings.maxmemoryBytes) || settings.maxmemoryBytes < 1024 * 1024) {
    throw new Error('maxmemory must be a whole number of bytes, at least 1 MiB.');
  }
  const policy = settings.evictionPolicy ?? 'noeviction';
  if (!EVICTION_POLICIES.includes(policy)) throw new Error(`Unknown Redis eviction policy ${JSON.stringify(policy)}.`);
  return [`maxmemory ${settings.maxmemoryBytes}`, `maxmemory-policy ${policy}`];
}

export function redisServerArgv(binary: string, configFile: string): string[] {
  return [binary, configFile];
}
