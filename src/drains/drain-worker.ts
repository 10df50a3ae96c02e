import type { DrainBuffer, BufferBatch } from './drain-buffer.js';
import type { DrainRecord, DrainSender } from './drain-types.js';

const BATCH_LINES = 500;
const BATCH_BYTES = 512 * 1024;
const FIRST_RETRY_MS = 500;
/** Backoff stops growing here: a receiver back from an outage gets its lines within this. */
const LAST_RETRY_MS = 10_000;

export type DrainState = 'ok' | 'waiting' | 'failing' | 'disabled';

export interface DrainStatus {
  state: DrainState;
  /** Lines waiting for the receiver. */
  waiting: number;
  /** Age of the oldest line waiting, in seconds (0 when none wait). */
  lag_seconds: number;
  /** Lines dropped because the buffer was full, since the drain was created. */
  dropped: number;
  delivered: number;
  last_error: string | null;
  last_delivery_at: string | null;
}

/**
 * Sends one drain's buffered lines, in order, one batch at a time. A batch leaves the buffer
 * only once the receiver took it; a failure is retried with a growing pause, while new lines go
 * on waiting on disk. Nothing here is awaited by the log hub or the app.
 */
export class DrainWorker {
  private enabled: boolean;
  private stopped = false;
  private wake: (() => void) | undefined;
  private failures = 0;
  private lastError: string | null = null;
  private lastDelivery: string | null = null;
  private delivered = 0;
  private oldestTime: string | undefined;
  private running: Promise<void>;

  constructor(
    readonly buffer: DrainBuffer,
    private readonly sender: DrainSender,
    enabled: boolean,
  ) {
    this.enabled = enabled;
    buffer.onWritten = () => this.poke();
    this.running = this.loop();
  }

  push(record: DrainRecord): void {
    this.buffer.push(JSON.stringify(record));
  }

  setEnabled(enabled: boolean): void {
    this.enabled = enabled;
    this.failures = 0;
    this.poke();
  }

  status(): DrainStatus {
    const waiting = this.buffer.waiting();
    const oldest = waiting > 0 ? Date.parse(this.oldestWaiting() ?? '') : NaN;
    return {
      state: !this.enabled ? 'disabled' : this.failures > 0 ? 'failing' : waiting > 0 ? 'waiting' : 'ok',
      waiting,
      lag_seconds: Number.isNaN(oldest) ? 0 : Math.max(0, (Date.now() - oldest) / 1000),
      dropped: this.buffer.dropped,
      delivered: this.delivered,
      last_error: this.lastError,
      last_delivery_at: this.lastDelivery,
    };
  }

  /** The time of the first line waiting: the batch out now, else the buffer's first line (a disabled drain, after a restart). */
  private oldestWaiting(): string | undefined {
    if (this.oldestTime) return this.oldestTime;
    try {
      const first = this.buffer.read(1, 64 * 1024)?.lines[0];
      return first ? (JSON.parse(first) as DrainRecord).time : undefined;
    } catch {
      return undefined;
    }
  }

  /** Stops sending; what waits stays on disk for the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.poke();
    // A batch in flight is cut short rather than waited for: not acknowledged, it is sent again at the next start.
    this.sender.close();
    await this.running;
    this.buffer.close();
  }

  private poke(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = undefined;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      if (!this.enabled) {
        await this.pause(60_000);
        continue;
      }
      let batch: BufferBatch | undefined;
      try {
        batch = this.buffer.read(BATCH_LINES, BATCH_BYTES);
      } catch (error) {
        this.lastError = `the buffer could not be read: ${(error as Error).message}`;
        await this.pause(LAST_RETRY_MS);
        continue;
      }
      if (!batch) {
        this.oldestTime = undefined;
        await this.pause(5_000);
        continue;
      }
      const records = batch.lines.flatMap((line) => {
        try {
          return [JSON.parse(line) as DrainRecord];
        } catch {
          return [];
        }
      });
      this.oldestTime = records[0]?.time;
      try {
        if (records.length > 0) await this.sender.send(records);
        this.buffer.ack(batch);
        this.oldestTime = undefined;
        this.delivered += records.length;
        this.failures = 0;
        this.lastError = null;
        this.lastDelivery = new Date().toISOString();
      } catch (error) {
        this.failures++;
        this.lastError = (error as Error).message;
        // Only a stop cuts the pause short: new lines do not make a failing receiver retried sooner.
        const ms = Math.min(LAST_RETRY_MS, FIRST_RETRY_MS * 2 ** (this.failures - 1));
        const onWritten = this.buffer.onWritten;
        this.buffer.onWritten = () => {};
        await this.pause(ms);
        this.buffer.onWritten = onWritten;
      }
    }
  }
}
