import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface LogEntry {
  time: string;
  /** `out`/`err` for the app's own output, `system` for slipway's messages. */
  stream: string;
  line: string;
}

type Listener = (entry: LogEntry | null) => void;

/**
 * Logs kept as newline-delimited JSON files (one per deployment, one per app) and fanned
 * out live to followers. A `null` delivered to a listener means the log is finished.
 */
export class LogHub {
  private readonly listeners = new Map<string, Set<Listener>>();

  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  private file(key: string): string {
    if (!/^[a-z]+_[0-9a-f-]{36}$/.test(key)) throw new Error(`invalid log key ${key}`);
    return join(this.dir, `${key}.ndjson`);
  }

  append(key: string, stream: string, line: string): void {
    const entry: LogEntry = { time: new Date().toISOString(), stream, line };
    appendFileSync(this.file(key), JSON.stringify(entry) + '\n');
    for (const listener of this.listeners.get(key) ?? []) listener(entry);
  }

  read(key: string): LogEntry[] {
    const path = this.file(key);
    if (!existsSync(path)) return [];
    return readFileSync(path, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as LogEntry);
  }

  subscribe(key: string, listener: Listener): () => void {
    let set = this.listeners.get(key);
    if (!set) this.listeners.set(key, (set = new Set()));
    set.add(listener);
    return () => {
      set!.delete(listener);
      if (set!.size === 0) this.listeners.delete(key);
    };
  }

  /** Tells followers that no more lines will come. */
  finish(key: string): void {
    for (const listener of this.listeners.get(key) ?? []) listener(null);
    this.listeners.delete(key);
  }
}
