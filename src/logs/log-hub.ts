import { chmodSync, mkdirSync } from 'node:fs';
import { chmod, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { LogFiles } from './log-files.js';
import { DEFAULT_LOG_LIMITS, type LogLimits, type RotationLimits } from './log-limits.js';
import { LogWriter } from './log-writer.js';
import type { LogSnapshot } from './tail-reader.js';

export interface LogEntry {
  time: string;
  /** `out`/`err` for the app's own output, `system` for slipway's messages. */
  stream: string;
  line: string;
}

/** Receives each new entry of a log; `null` means the log is finished. */
export type LogListener = (entry: LogEntry | null) => void;

/** Receives every entry appended to any log of the hub, with the instance that wrote it when known. */
export type AppendListener = (key: string, entry: LogEntry, instance?: string) => void;

export interface LogHubOptions {
  limits?: LogLimits;
  /**
   * Characters of one log that may wait for the disk. Beyond that, lines are dropped and
   * counted, and a notice with the count takes their place once the disk caught up.
   */
  maxQueuedChars?: number;
  /** Where the daemon reports a log it could not write (at most once a minute). */
  warn?(line: string): void;
}

/** Lines are cut here, like the lines of a process's output (src/executor/line-splitter.ts). */
export const MAX_LINE_LENGTH = 64 * 1024;
const DEFAULT_MAX_QUEUED_CHARS = 1024 * 1024;
/** What an entry adds to its line: `{"time":"<24 characters>","stream":"out","line":""}` and a newline. */
const ENTRY_OVERHEAD_CHARS = 60;
const WARN_EVERY_MS = 60_000;

interface OpenLog {
  files: LogFiles;
  writer: LogWriter;
  dropped: { lines: number; chars: number };
}

/**
 * Logs kept as newline-delimited JSON files (one per deployment, one per app) and fanned out
 * live to followers. Appending never waits: lines are queued and written in batches (see
 * LogWriter), each log rotates by size and keeps a bounded number of files, and when a log's
 * output comes faster than the disk takes it, lines are dropped with a counted notice rather
 * than held in memory or made to stall the producer (see `append`).
 */
export class LogHub {
  readonly limits: LogLimits;
  private readonly listeners = new Map<string, Set<LogListener>>();
  private readonly appendListeners = new Set<AppendListener>();
  private readonly open = new Map<string, OpenLog>();
  /** Logs begun and not yet finished: followers stay on them whatever their owner's record says. */
  private readonly writing = new Set<string>();
  private readonly maxQueuedChars: number;
  private lastWarning = 0;

  constructor(
    private readonly dir: string,
    private readonly options: LogHubOptions = {},
  ) {
    this.limits = options.limits ?? DEFAULT_LOG_LIMITS;
    this.maxQueuedChars = options.maxQueuedChars ?? DEFAULT_MAX_QUEUED_CHARS;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
  }

  /** Limits of a log by its key: deployments have their own, everything else counts as app output. */
  limitsOf(key: string): RotationLimits {
    return key.startsWith('deployment_') ? this.limits.deployment : this.limits.app;
  }

  /**
   * Adds a line to a log and hands it to its followers. Never blocks: when the log's queue is
   * full (the disk is behind), the line is dropped and counted. Dropping, rather than pausing
   * the app's output pipe, keeps an app that logs on every request serving when its log
   * cannot keep up, and keeps what one app writes from holding the daemon's memory.
   */
  append(key: string, stream: string, line: string, instance?: string): void {
    const log = this.logOf(key);
    const cut = line.length > MAX_LINE_LENGTH ? line.slice(0, MAX_LINE_LENGTH) : line;
    // Judged before serializing, so a flood costs little for the lines it drops.
    if (log.writer.queued + cut.length + ENTRY_OVERHEAD_CHARS > this.maxQueuedChars)
      return this.drop(log, cut.length + ENTRY_OVERHEAD_CHARS);
    this.queue(key, log, { time: new Date().toISOString(), stream, line: cut }, instance);
  }

  /**
   * Hears every entry appended to any log (log drains). Called in the appender's turn: the
   * listener must only queue the entry, never wait.
   */
  onAppend(listener: AppendListener): () => void {
    this.appendListeners.add(listener);
    return () => this.appendListeners.delete(listener);
  }

  /**
   * Adds an entry the caller built: its `time` (first, where the tail reader looks for it) and
   * fields beyond `stream` and `line` are kept as given. The caller keeps `line` short (an
   * access record's summary); the queue bounds it like any line.
   */
  appendEntry(key: string, entry: LogEntry): void {
    this.queue(key, this.logOf(key), entry);
  }

  private queue(key: string, log: OpenLog, entry: LogEntry, instance?: string): void {
    const text = JSON.stringify(entry) + '\n';
    if (log.writer.queued + text.length > this.maxQueuedChars) return this.drop(log, text.length);
    this.reportDropped(key, log);
    log.writer.push(text);
    this.deliver(key, entry, instance);
  }

  /** Follows a log: entries appended from now on, then `null` when it is finished. */
  subscribe(key: string, listener: LogListener): () => void {
    let set = this.listeners.get(key);
    if (!set) this.listeners.set(key, (set = new Set()));
    set.add(listener);
    return () => {
      set!.delete(listener);
      if (set!.size === 0 && this.listeners.get(key) === set) this.listeners.delete(key);
    };
  }

  /**
   * Marks a log as written until `finish`. A deployment's record says OK before what follows
   * the outcome (CC_RUN_SUCCEEDED_HOOK) has written its lines: a follower arriving then must
   * still get them and the end.
   */
  begin(key: string): void {
    this.writing.add(key);
  }

  /** Whether `begin` was called for the log and `finish` not yet. */
  isWriting(key: string): boolean {
    return this.writing.has(key);
  }

  /** Tells followers that no more lines will come. */
  finish(key: string): void {
    this.writing.delete(key);
    for (const listener of this.listeners.get(key) ?? []) listener(null);
    this.listeners.delete(key);
  }

  /**
   * What the log holds now, opened for reading (see tail-reader.ts), and, when `follow` returns
   * a listener at that same moment, that listener subscribed: every line is either in the
   * snapshot or delivered to the listener, never both and never neither. The caller closes the
   * snapshot's files (readTail does) and unsubscribes.
   */
  async snapshot(key: string, follow?: () => LogListener | undefined): Promise<{ snapshot: LogSnapshot; unsubscribe?: () => void }> {
    const log = this.logOf(key);
    return log.writer.exclusive(() => {
      const snapshot = { files: log.files.openAll(this.limitsOf(key).rotatedFiles), pending: log.writer.pending() };
      const listener = follow?.();
      return { snapshot, unsubscribe: listener ? this.subscribe(key, listener) : undefined };
    });
  }

  /** Removes logs and their rotated files (a deleted app, deployments beyond those kept). */
  async remove(keys: string[]): Promise<void> {
    for (const key of keys) {
      const log = this.logOf(key);
      log.writer.discard();
      await log.writer.exclusive(() => log.files.remove());
    }
  }

  private logOf(key: string): OpenLog {
    let log = this.open.get(key);
    if (!log) {
      const files = new LogFiles(this.dir, key);
      const writer: LogWriter = new LogWriter({
        files,
        limits: this.limitsOf(key),
        onWritten: () => this.reportDropped(key, log!),
        onIdle: () => {
          if (this.open.get(key) === log && writer.idle() && log!.dropped.lines === 0) this.open.delete(key);
        },
        onError: (error, lost) =>
          this.warn(`Could not write the log ${key} (${lost} lines lost): ${error.message}. Check the free space of ${this.dir}.`),
      });
      log = { files, writer, dropped: { lines: 0, chars: 0 } };
      this.open.set(key, log);
    }
    return log;
  }

  private drop(log: OpenLog, chars: number): void {
    log.dropped.lines++;
    log.dropped.chars += chars;
  }

  /** Puts a notice where dropped lines were, once the queue has room for it. */
  private reportDropped(key: string, log: OpenLog): void {
    const { lines, chars } = log.dropped;
    if (lines === 0) return;
    const entry: LogEntry = {
      time: new Date().toISOString(),
      stream: 'system',
      line: `slipway dropped ${lines} line${lines === 1 ? '' : 's'} (${Math.ceil(chars / 1024)} KiB) here: the output came faster than its log could be written.`,
    };
    const text = JSON.stringify(entry) + '\n';
    if (log.writer.queued + text.length > this.maxQueuedChars) return;
    log.dropped = { lines: 0, chars: 0 };
    log.writer.push(text);
    this.deliver(key, entry);
  }

  private deliver(key: string, entry: LogEntry, instance?: string): void {
    for (const listener of this.listeners.get(key) ?? []) listener(entry);
    for (const listener of this.appendListeners) {
      try {
        listener(key, entry, instance);
      } catch {
        // A drain's trouble is its own: the log goes on.
      }
    }
  }

  private warn(line: string): void {
    const now = Date.now();
    if (now - this.lastWarning < WARN_EVERY_MS) return;
    this.lastWarning = now;
    this.options.warn?.(line);
  }

  /** Makes log files written by an earlier version readable by the daemon only. */
  async restrictExistingFiles(): Promise<void> {
    try {
      for (const name of await readdir(this.dir)) {
        if (/\.ndjson(\.\d+)?$/.test(name)) await chmod(join(this.dir, name), 0o600);
      }
    } catch (error) {
      this.options.warn?.(`Could not make the log files of ${this.dir} readable by the daemon only: ${(error as Error).message}.`);
    }
  }
}
