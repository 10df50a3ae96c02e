/**
 * Pure readers of what redis-server says: INFO sections and its log when a snapshot does not
 * load.
 */

/** `field:value` lines of an INFO reply; `# Section` headings and blank lines are skipped. */
export function parseInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return fields;
}

/** Keys per database from INFO keyspace (`db3:keys=1,expires=0,avg_ttl=0`); databases without keys are not listed. */
export function keyspace(info: Map<string, string>): Map<number, number> {
  const dbs = new Map<number, number>();
  for (const [field, value] of info) {
    const db = /^db(\d+)$/.exec(field);
    const keys = /(?:^|,)keys=(\d+)(?:,|$)/.exec(value);
    if (db && keys) dbs.set(Number(db[1]), Number(keys[1]));
  }
  return dbs;
}

/** Keys over all databases: DBSIZE counts the selected one only. */
export function totalKeys(info: Map<string, string>): number {
  let total = 0;
  for (const keys of keyspace(info).values()) total += keys;
  return total;
}

/** What INFO persistence says of the snapshots: the save under way and the last one finished. */
export interface SaveState {
  inProgress: boolean;
  lastStatus: string;
  /** Snapshots started since the server started (BGSAVE, SAVE and the automatic ones). */
  saves: number;
  /** When the last snapshot was written, in seconds (LASTSAVE). */
  lastSave: number;
  /** An AOF rewrite or another child that keeps BGSAVE from starting now. */
  otherChild: boolean;
  loading: boolean;
}

export function saveState(info: Map<string, string>): SaveState {
  const need = (field: string): string => {
    const value = info.get(field);
    if (value === undefined) throw new Error(`INFO persistence has no ${field}: this redis-server is older than slipway needs (7.0).`);
    return value;
  };
  return {
    inProgress: need('rdb_bgsave_in_progress') === '1',
    lastStatus: need('rdb_last_bgsave_status'),
    saves: Number(need('rdb_saves')),
    lastSave: Number(need('rdb_last_save_time')),
    otherChild: info.get('aof_rewrite_in_progress') === '1' || info.get('module_fork_in_progress') === '1',
    loading: need('loading') === '1',
  };
}

/**
 * The keys a snapshot held, from INFO persistence of the server that loaded it: those loaded and
 * those whose TTL had run out by then (Redis drops them while loading, counting them).
 */
export function loadedKeys(info: Map<string, string>): { loaded: number; expired: number } {
  const loaded = info.get('rdb_last_load_keys_loaded');
  const expired = info.get('rdb_last_load_keys_expired');
  if (loaded === undefined || expired === undefined) {
    throw new Error('INFO persistence does not say how many keys were loaded: this redis-server is older than slipway needs (7.0).');
  }
  return { loaded: Number(loaded), expired: Number(expired) };
}

/** Lines of redis-server's start that are no reason for a failure. */
const CHATTER = [/oO0OoO0OoO0Oo/, /Redis version=/, /Configuration loaded/, /Server initialized/, /WARNING /, /User requested shutdown/];

/**
 * Why redis-server did not load a snapshot, in its own words: its warnings (`#` lines) and the
 * first line of an `RDB ERROR DETECTED` report, without the banner and the tuning advice.
 */
export function loadFailure(log: string): string {
  const lines = log.split('\n');
  const said: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const warning = /^\d+:[A-Z] .+? # (.*)$/.exec(line);
    if (warning && !CHATTER.some((c) => c.test(line))) said.push(warning[1]!.trim());
    if (line.includes('RDB ERROR DETECTED')) {
      const detail = lines.slice(i + 1).find((l) => /^\[offset \d+\]/.test(l) && !/Checking RDB file|AUX FIELD/.test(l));
      if (detail) said.push(detail.trim());
    }
  }
  const unique = [...new Set(said)];
  return unique.slice(-4).join(' / ') || 'it exited without saying why';
}
