import { join } from 'node:path';
import type { PlatformEventPublisher } from '../core/platform-events.js';
import type { LogEntry } from '../logs/log-hub.js';
import type { DrainRow } from '../store/drains.js';
import type { Store } from '../store/store.js';
import { DrainBuffer } from './drain-buffer.js';
import { makeSender } from './drain-senders.js';
import type { EgressGuard } from '../network/egress-guard.js';
import type { DrainRecord, DrainType } from './drain-types.js';
import { DrainWorker, type DrainStatus } from './drain-worker.js';

/**
 * 16 MiB per drain: an hour or more of an ordinary app's output while its receiver is down.
 * Each drain reserves it against its organisation's drain-buffer quota (src/quotas/), so what
 * one tenant's drains keep in the data folder is bounded (docs/security.md).
 */
export const DEFAULT_DRAIN_BUFFER_BYTES = 16 * 1024 * 1024;

/** A drain dropping lines is told at most this often. */
const DROPPING_EVENT_EVERY_MS = 10 * 60_000;

/** What an app's log hubs offer the drains: every appended entry. */
export interface AppendSource {
  onAppend(listener: (key: string, entry: LogEntry, instance?: string) => void): () => void;
}

export interface DrainServiceOptions {
  store: Store;
  /** Where each drain's buffer lives (`<dir>/<drain id>`). */
  dir: string;
  bufferBytes?: number;
  /** The app's output (instances, workers, cron jobs, one-off runs). */
  appLogs: AppendSource;
  /** The router's access records, for drains created with access logs. */
  accessLogs?: AppendSource;
  events?: PlatformEventPublisher;
  /** The egress guard: what no drain may send to, checked again at each connection. */
  forbidden: EgressGuard;
  log(line: string): void;
}

interface Running {
  row: DrainRow;
  worker: DrainWorker;
  lastDroppingEvent: number;
}

/**
 * The drains of every app: one worker and one disk buffer per drain, fed from the app's log
 * hub (and the access log hub for drains that asked for it), following the store's drains as
 * they are created, enabled, disabled and removed.
 */
export class DrainService {
  private readonly running = new Map<string, Running>();
  private readonly byApp = new Map<string, Running[]>();
  private readonly unsubscribe: Array<() => void> = [];
  private readonly names = new Map<string, string>();
  private namesReadAt = 0;
  /** Apps being deleted and their stopped drains: they send nothing more, whatever the store still holds. */
  private readonly ended = new Map<string, Running[]>();
  readonly bufferBytes: number;

  constructor(private readonly o: DrainServiceOptions) {
    this.bufferBytes = o.bufferBytes ?? DEFAULT_DRAIN_BUFFER_BYTES;
  }

  start(): void {
    this.sync();
    this.unsubscribe.push(this.o.store.drains.onChange(() => this.sync()));
    this.unsubscribe.push(this.o.appLogs.onAppend((key, entry, instance) => this.take(key, entry, instance, false)));
    if (this.o.accessLogs) this.unsubscribe.push(this.o.accessLogs.onAppend((key, entry) => this.take(key, entry, undefined, true)));
  }

  /** The drain's figures; undefined for a drain not running (none such in the store). */
  status(id: string): DrainStatus | undefined {
    return this.running.get(id)?.worker.status();
  }

  /** Every drain's figures, for /metrics. */
  figures(): Array<{ app: string; drain: string; status: DrainStatus }> {
    return [...this.running.values()].map((r) => ({ app: r.row.app_id, drain: r.row.id, status: r.worker.status() }));
  }

  async stop(): Promise<void> {
    for (const u of this.unsubscribe.splice(0)) u();
    await Promise.all([...this.running.values()].map((r) => r.worker.stop()));
    this.running.clear();
    this.byApp.clear();
  }

  /**
   * The app is being deleted: its drains stop at once (a batch in flight is cut); resolves once
   * nothing more can be sent. What waits stays on disk until `sync` sees the drains gone from
   * the store (then it goes with them), or `resume` starts them again (the deletion failed).
   */
  async endApp(appId: string): Promise<void> {
    this.ended.set(appId, this.ended.get(appId) ?? []);
    const mine = [...this.running.entries()].filter(([, r]) => r.row.app_id === appId);
    for (const [id, r] of mine) {
      this.running.delete(id);
      this.ended.get(appId)!.push(r);
    }
    this.byApp.delete(appId);
    await Promise.all(mine.map(([, r]) => r.worker.stop()));
  }

  resume(appId: string): void {
    if (this.ended.delete(appId)) this.sync();
  }

  private take(key: string, entry: LogEntry, instance: string | undefined, access: boolean): void {
    // Only app ids have drains: other logs (deployments) find none here.
    const drains = this.byApp.get(key);
    if (!drains) return;
    let record: DrainRecord | undefined;
    for (const r of drains) {
      if (access && r.row.with_access_logs !== 1) continue;
      record ??= this.record(key, entry, instance, access);
      r.worker.push(record);
    }
  }

  private record(appId: string, entry: LogEntry, instance: string | undefined, access: boolean): DrainRecord {
    // A renamed app is named anew within a minute.
    if (Date.now() - this.namesReadAt > 60_000) {
      this.names.clear();
      this.namesReadAt = Date.now();
    }
    let app = this.names.get(appId);
    if (app === undefined) {
      app = this.o.store.apps.byId(appId)?.name ?? appId;
      this.names.set(appId, app);
    }
    const record: DrainRecord = { time: entry.time, stream: entry.stream, line: entry.line, app_id: appId, app };
    if (!access) {
      if (instance) record.instance = instance;
      return record;
    }
    // An access record's own fields (host, status, duration…) go along.
    const { time: _time, stream: _stream, line: _line, ...fields } = entry as LogEntry & Record<string, unknown>;
    record.fields = fields;
    if (typeof fields.instance === 'string' && fields.instance !== '-') record.instance = fields.instance;
    return record;
  }

  /**
   * Starts workers of new drains, stops those of removed ones (their buffers go with them), and
   * follows enable/disable. Called on each change of the drains; also after an app was deleted,
   * whose drains the store removed with it.
   */
  sync(): void {
    const all = this.o.store.drains.all();
    const seen = new Set(all.map((r) => r.id));
    // A deleted app's drains are gone from the store: their buffers go with them.
    for (const [appId, stopped] of this.ended) {
      const gone = stopped.filter((r) => !seen.has(r.row.id));
      for (const r of gone) r.worker.buffer.destroy();
      if (all.some((row) => row.app_id === appId))
        this.ended.set(
          appId,
          stopped.filter((r) => seen.has(r.row.id)),
        );
      else this.ended.delete(appId);
    }
    const rows = all.filter((row) => !this.ended.has(row.app_id));
    for (const [id, r] of this.running) {
      if (seen.has(id)) continue;
      this.running.delete(id);
      void r.worker.stop().then(() => r.worker.buffer.destroy());
    }
    for (const row of rows) {
      const current = this.running.get(row.id);
      if (current) {
        if (current.row.enabled !== row.enabled) current.worker.setEnabled(row.enabled === 1);
        current.row = row;
        continue;
      }
      try {
        this.running.set(row.id, this.startDrain(row));
      } catch (error) {
        this.o.log(`The drain ${row.id} could not start: ${(error as Error).message}`);
      }
    }
    this.byApp.clear();
    this.names.clear();
    for (const r of this.running.values()) {
      const list = this.byApp.get(r.row.app_id) ?? [];
      list.push(r);
      this.byApp.set(r.row.app_id, list);
    }
  }

  private startDrain(row: DrainRow): Running {
    const buffer = new DrainBuffer(join(this.o.dir, row.id), this.bufferBytes);
    const sender = makeSender(
      row.type as DrainType,
      new URL(row.url),
      { username: row.username, password: row.password },
      this.o.forbidden,
    );
    const running: Running = { row, worker: new DrainWorker(buffer, sender, row.enabled === 1), lastDroppingEvent: 0 };
    buffer.onDrop = (lines) => this.dropping(running, lines);
    let lastDiskWarning = 0;
    buffer.onError = (error) => {
      if (Date.now() - lastDiskWarning < 60_000) return;
      lastDiskWarning = Date.now();
      this.o.log(
        `The drain ${row.id} could not keep lines on disk (${error.message}): they were dropped and counted. Check the free space of ${this.o.dir}.`,
      );
    };
    return running;
  }

  /** Told on the event hub at most once per period per drain, with the total so far. */
  private dropping(r: Running, lines: number): void {
    const now = Date.now();
    if (now - r.lastDroppingEvent < DROPPING_EVENT_EVERY_MS) return;
    r.lastDroppingEvent = now;
    const app = this.o.store.apps.byId(r.row.app_id)?.name ?? r.row.app_id;
    const total = r.worker.buffer.dropped;
    this.o.log(`The drain ${r.row.id} of ${app} dropped ${lines} lines: its receiver is behind and its buffer is full.`);
    this.o.events?.publish({
      type: 'drain.dropping',
      appId: r.row.app_id,
      summary: `The ${r.row.type} drain ${r.row.id} of ${app} is dropping lines: its buffer of ${Math.round(this.bufferBytes / 1024 / 1024)} MiB is full (${total} dropped so far)`,
      details: { drain_id: r.row.id, type: r.row.type, dropped_total: total, dropped_now: lines, buffer_bytes: this.bufferBytes },
    });
  }
}
