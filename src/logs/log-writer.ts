import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { LogFiles } from './log-files.js';
import type { RotationLimits } from './log-limits.js';

export interface LogWriterOptions {
  files: LogFiles;
  limits: RotationLimits;
  /** After each write: the queue has room again. */
  onWritten(): void;
  /** Nothing queued and nothing running: the writer may be forgotten. */
  onIdle(): void;
  /** A write failed: what happened and how many lines were lost. */
  onError(error: Error, lostLines: number): void;
}

interface Task {
  run(): unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * Writes one log's lines to disk, asynchronously and in batches: `push` only queues, and
 * whatever piled up while a write was under way goes out in the next single write. The file
 * rotates before a write would make it exceed its size, on line boundaries, so every file holds
 * whole lines. Tasks given to `exclusive` run between two writes, when no operation on the
 * files is under way (readers open the files there; removal happens there).
 */
export class LogWriter {
  private queue: string[] = [];
  private queuedChars = 0;
  private readonly tasks: Task[] = [];
  private busy = false;
  private handle: FileHandle | undefined;
  /** Bytes of the current file, known while it is open. */
  private size = 0;

  constructor(private readonly o: LogWriterOptions) {}

  /** Characters queued and not yet written. */
  get queued(): number {
    return this.queuedChars;
  }

  /** The lines queued and not yet written, oldest first. */
  pending(): string[] {
    return [...this.queue];
  }

  /** Queues one serialized line (ending with a newline). */
  push(text: string): void {
    this.queue.push(text);
    this.queuedChars += text.length;
    this.kick();
  }

  /** Forgets what is queued (the log is being removed). */
  discard(): void {
    this.queue = [];
    this.queuedChars = 0;
  }

  /**
   * Runs `task` when no write or rotation is under way. When the writer is idle, a synchronous
   * task runs before this call returns.
   */
  exclusive<T>(run: () => T | Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.tasks.push({ run, resolve: resolve as (v: unknown) => void, reject });
      this.kick();
    });
  }

  idle(): boolean {
    return !this.busy && this.queue.length === 0 && this.tasks.length === 0;
  }

  private kick(): void {
    if (!this.busy) void this.run();
  }

  private async run(): Promise<void> {
    this.busy = true;
    for (;;) {
      const task = this.tasks.shift();
      if (task) {
        try {
          task.resolve(await task.run());
        } catch (error) {
          task.reject(error);
        }
      } else if (this.queue.length > 0) {
        await this.writeSome();
        this.o.onWritten();
      } else if (this.handle) {
        await this.closeFile();
      } else {
        break;
      }
    }
    this.busy = false;
    this.o.onIdle();
  }

  /** One write: as many queued lines as fit in the current file (after rotating it if full). */
  private async writeSome(): Promise<void> {
    const { maxFileBytes, rotatedFiles } = this.o.limits;
    try {
      if (!this.handle) await this.openFile();
      if (this.size > 0 && this.size + Buffer.byteLength(this.queue[0]!) > maxFileBytes) {
        await this.closeFile();
        await this.o.files.rotate(rotatedFiles);
        await this.openFile();
      }
    } catch (error) {
      this.loseQueue(error as Error);
      return;
    }
    let count = 0;
    let bytes = 0;
    let chars = 0;
    while (count < this.queue.length) {
      const text = this.queue[count]!;
      const b = Buffer.byteLength(text);
      if (count > 0 && this.size + bytes + b > maxFileBytes) break;
      bytes += b;
      chars += text.length;
      count++;
    }
    const data = Buffer.from(this.queue.splice(0, count).join(''));
    this.queuedChars -= chars;
    const handle = this.handle!;
    try {
      for (let offset = 0; offset < data.length; ) {
        const { bytesWritten } = await handle.write(data, offset, data.length - offset);
        offset += bytesWritten;
      }
      this.size += data.length;
    } catch (error) {
      // A half-written batch would glue its last line to the next one: cut it off.
      await handle.truncate(this.size).catch(() => undefined);
      this.o.onError(error as Error, count);
    }
  }

  private loseQueue(error: Error): void {
    const lost = this.queue.length;
    this.discard();
    this.o.onError(error, lost);
  }

  private async openFile(): Promise<void> {
    const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;
    const handle = await open(this.o.files.current, flags, 0o600);
    try {
      const stat = await handle.stat();
      // Files written by an earlier version were readable by everyone.
      if ((stat.mode & 0o777) !== 0o600) await handle.chmod(0o600);
      this.size = stat.size;
    } catch (error) {
      await handle.close();
      throw error;
    }
    this.handle = handle;
  }

  private async closeFile(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close().catch(() => undefined);
  }
}
