import { createHash } from 'node:crypto';
import { EVICTION_POLICIES, type EvictionPolicy } from '../plan-limits.js';

/**
 * Pure builders for a per-add-on redis-server. The password's SHA-256 lives in the config file
 * (mode 0600, server user), never the password itself, nor on the command line where `ps` would
 * show it.
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
  /** Whether the plan lets apps run Lua (plan-limits.ts); off unless said. */
  scripting?: boolean;
}

/**
 * What apps may not run, whatever the plan: the commands that would undo the rules below or
 * the server's settings (`sanitize-dump-payload`, `maxmemory`) while it runs. CONFIG GET,
 * ACL WHOAMI and the other reading forms stay.
 */
export const REFUSED_TO_APPS = ['config|set', 'config|rewrite', 'acl|setuser', 'acl|deluser', 'acl|load', 'acl|save'] as const;

/**
 * The rules of Redis' `default` user, the one apps (and the daemon, over loopback) authenticate
 * as with the add-on's password: every command and key, but Lua unless the plan allows it
 * (`-@scripting`: EVAL, EVALSHA, SCRIPT, FUNCTION, FCALL and their _RO forms) and what
 * REFUSED_TO_APPS lists. Apps see `NOPERM this user has no permissions to run the 'eval'
 * command`. The password is given as its SHA-256 (`#…`), so no quoting is needed and the
 * config file does not hold it.
 */
export function defaultUserRules(password: string, scripting = false): string[] {
  if (password === '') throw new Error('A Redis add-on needs a password.');
  return [
    'on',
    `#${createHash('sha256').update(password).digest('hex')}`,
    '~*',
    '&*',
    '+@all',
    ...(scripting ? [] : ['-@scripting']),
    ...REFUSED_TO_APPS.map((command) => `-${command}`),
  ];
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
    `user default ${defaultUserRules(settings.password, settings.scripting).join(' ')}`,
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
    // A RESTORE payload (an app's, or a backup's copy) or an RDB file is checked whole before
    // it is used, so a crafted one is refused rather than read past its end.
    'sanitize-dump-payload yes',
    'always-show-logo no',
    ...memoryLines(settings),
    '',
  ].join('\n');
}

/**
 * maxmemory is what Redis counts of its data set (apps cannot change it: CONFIG SET is refused
 * them); the control group around the server (server-sandbox.ts) holds its whole memory, forks
 * included.
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
