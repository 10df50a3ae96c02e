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
    '',
  ].join('\n');
}

export function redisServerArgv(binary: string, configFile: string): string[] {
  return [binary, configFile];
}
