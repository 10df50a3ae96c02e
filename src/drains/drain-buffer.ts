import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
  appendFileSync,
} from 'node:fs';
import { join } from 'node:path';

/** Where the next unsent line starts: a segment and a byte offset in it. */
export interface BufferPosition {
  segment: number;
  offset: number;
}

interface Segment {
  seq: number;
  bytes: number;
  lines: number;
}

export interface BufferBatch {
  lines: string[];
  /** Where the buffer goes on from once the batch was delivered (`ack`). */
  end: BufferPosition;
}

const SEGMENT_NAME = /^(\d{12})\.ndjson$/;
/** The least read at once: a line longer than this is read with the next, larger read. */
const READ_CHUNK = 16 * 1024;
const CURSOR_SAVE_MS = 250;

/**
 * A drain's lines waiting on disk, oldest first: append-only segment files and a cursor file
 * (the first unsent line, and the lines dropped so far). Bounded by `maxBytes`: when the lines
 * waiting pass it, the oldest segment goes and its unsent lines are counted as dropped. Appends
 * are queued in memory and written every few milliseconds (or when read), so a line costs the
 * log hub no disk write of its own; the cursor is written after each delivered batch, so after
 * a restart delivery resumes at the first line not known to be delivered (at least once).
 */
export class DrainBuffer {
  private segments: Segment[] = [];
  private cursor: BufferPosition = { segment: 0, offset: 0 };
  /** Lines of the cursor's segment before the cursor. */
  private sentInSegment = 0;
  private queue: string[] = [];
  private queuedBytes = 0;
  private flushTimer: NodeJS.Timeout | undefined;
  private cursorTimer: NodeJS.Timeout | undefined;
  private cursorSavedAt = 0;
  dropped = 0;
  /** Called with the number of lines dropped, each time some are. */
  onDrop: (lines: number) => void = () => {};
  /** Called once lines were written (a reader waiting for lines may go on). */
  onWritten: () => void = () => {};
  /** Called when the disk refused lines (they are counted as dropped). */
  onError: (error: Error) => void = () => {};

  constructor(
    readonly dir: string,
    private readonly maxBytes: number,
  ) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.load();
  }

  private segmentSize(): number {
    return Math.max(16 * 1024, Math.floor(this.maxBytes / 8));
  }

  private path(seq: number): string {
    return join(this.dir, `${String(seq).padStart(12, '0')}.ndjson`);
  }

  private load(): void {
    const cursorFile = join(this.dir, 'cursor.json');
    if (existsSync(cursorFile)) {
      try {
        const saved = JSON.parse(readFileSync(cursorFile, 'utf8')) as BufferPosition & { dropped?: number };
        this.cursor = { segment: saved.segment, offset: saved.offset };
        this.dropped = saved.dropped ?? 0;
      } catch {
        // A cursor cut by a crash: resend from the oldest segment (at least once).
      }
    }
    for (const name of readdirSync(this.dir).sort()) {
      const match = SEGMENT_NAME.exec(name);
      if (!match) continue;
      const seq = Number(match[1]);
      const file = this.path(seq);
      let text = readFileSync(file, 'utf8');
      // A line cut by a crash in the middle of a write is not a line.
      const end = text.lastIndexOf('\n') + 1;
      if (end < text.length) {
        truncateSync(file, Buffer.byteLength(text.slice(0, end)));
        text = text.slice(0, end);
      }
      this.segments.push({ seq, bytes: Buffer.byteLength(text), lines: countLines(text) });
    }
    const first = this.segments[0];
    if (!first || this.cursor.segment < first.seq) this.cursor = { segment: first?.seq ?? 0, offset: 0 };
    for (const s of this.segments.filter((s) => s.seq < this.cursor.segment)) rmSync(this.path(s.seq), { force: true });
    this.segments = this.segments.filter((s) => s.seq >= this.cursor.segment);
    if (!this.segments.some((s) => s.seq === this.cursor.segment)) this.cursor = { segment: this.cursor.segment, offset: 0 };
    const current = this.segments[0];
    if (current && this.cursor.offset > 0) {
      const head = readFileSync(this.path(current.seq)).subarray(0, this.cursor.offset).toString('utf8');
      this.sentInSegment = countLines(head);
    }
  }

  /** Adds a line (no newline in it); written with the next flush. */
  push(line: string): void {
    this.queue.push(line + '\n');
    this.queuedBytes += Buffer.byteLength(line) + 1;
    // A flood is written in large pieces; a trickle within a few milliseconds.
    if (this.queuedBytes > 256 * 1024) this.flush();
    else this.flushTimer ??= setTimeout(() => this.flush(), 20);
  }

  /** Writes the queued lines, then drops the oldest segments beyond the bound. */
  flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.queue.length === 0) return;
    const lines = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
    const progress = { written: 0 };
    try {
      this.write(lines, progress);
    } catch (error) {
      // The disk refused (full, gone): these lines cannot wait, so they are counted as dropped.
      const lost = lines.length - progress.written;
      this.dropped += lost;
      this.onDrop(lost);
      this.onError(error as Error);
      return;
    }
    this.enforceBound();
    this.onWritten();
  }

  /** Appends the lines to the segments, opening new ones as they fill; `progress` says how far it got. */
  private write(lines: string[], progress: { written: number }): void {
    let i = 0;
    while (i < lines.length) {
      let last = this.segments.at(-1);
      if (!last || last.bytes >= this.segmentSize()) {
        last = { seq: (last?.seq ?? this.cursor.segment - 1) + 1, bytes: 0, lines: 0 };
        this.segments.push(last);
      }
      const room = this.segmentSize() - last.bytes;
      let text = '';
      let bytes = 0;
      let count = 0;
      while (i < lines.length) {
        const size = Buffer.byteLength(lines[i]!);
        if (count > 0 && bytes + size > room) break;
        text += lines[i++];
        bytes += size;
        count++;
      }
      try {
        appendFileSync(this.path(last.seq), text, { mode: 0o600 });
      } catch (error) {
        // A write cut short leaves no half line behind for the reader.
        try {
          truncateSync(this.path(last.seq), last.bytes);
        } catch {
          // Nothing was written, or the file is gone: nothing to cut.
        }
        throw error;
      }
      last.bytes += bytes;
      last.lines += count;
      progress.written = i;
    }
  }

  private enforceBound(): void {
    let lost = 0;
    while (this.segments.length > 1 && this.waitingBytes() > this.maxBytes) {
      const oldest = this.segments.shift()!;
      lost += oldest.lines - this.sentInSegment;
      rmSync(this.path(oldest.seq), { force: true });
      this.cursor = { segment: this.segments[0]!.seq, offset: 0 };
      this.sentInSegment = 0;
    }
    if (lost > 0) {
      this.dropped += lost;
      this.saveCursor();
      this.onDrop(lost);
    }
  }

  private waitingBytes(): number {
    return this.segments.reduce((sum, s) => sum + s.bytes, 0) - this.cursor.offset;
  }

  /** Lines not delivered yet, those still queued in memory included. */
  waiting(): number {
    return this.segments.reduce((sum, s) => sum + s.lines, 0) - this.sentInSegment + this.queue.length;
  }

  /** The oldest unsent lines, up to `maxLines` and about `maxBytes`; undefined when none wait. */
  read(maxLines: number, maxBytes: number): BufferBatch | undefined {
    this.flush();
    let segment = this.segments.find((s) => s.seq === this.cursor.segment);
    let offset = this.cursor.offset;
    // A segment read to its end with a newer one after it: go on in the newer one.
    while (segment && offset >= segment.bytes) {
      const next = this.segments.find((s) => s.seq > segment!.seq);
      if (!next) return undefined;
      this.moveTo({ segment: next.seq, offset: 0 }, 0);
      segment = next;
      offset = 0;
    }
    if (!segment) return undefined;
    const fd = openSync(this.path(segment.seq), 'r');
    try {
      const available = statSync(this.path(segment.seq)).size - offset;
      // About what `maxLines` lines of this segment take, so a batch reads little more than it sends.
      const average = segment.lines > 0 ? segment.bytes / segment.lines : 1024;
      let wanted = Math.max(READ_CHUNK, Math.min(maxBytes, Math.ceil(average * maxLines * 1.5)));
      for (;;) {
        const size = Math.min(wanted, available);
        const buffer = Buffer.alloc(size);
        const text = buffer.subarray(0, readSync(fd, buffer, 0, size, offset));
        const lines: string[] = [];
        let start = 0;
        while (lines.length < maxLines && start < text.length) {
          const nl = text.indexOf(10, start);
          if (nl < 0) break;
          lines.push(text.subarray(start, nl).toString('utf8'));
          start = nl + 1;
          if (start >= maxBytes) break;
        }
        if (lines.length > 0) return { lines, end: { segment: segment.seq, offset: offset + start } };
        // A line longer than what was read: read more, up to the segment's end.
        if (size >= available) return undefined;
        wanted *= 4;
      }
    } finally {
      closeSync(fd);
    }
  }

  /** The batch up to `end` was delivered: the cursor moves past it and is saved. */
  ack(batch: BufferBatch): void {
    // Lines dropped while the batch was out moved the cursor already, past the batch.
    if (batch.end.segment < this.cursor.segment) return;
    this.moveTo(batch.end, batch.lines.length);
  }

  private moveTo(position: BufferPosition, delivered: number): void {
    if (position.segment !== this.cursor.segment) this.sentInSegment = 0;
    this.sentInSegment += delivered;
    this.cursor = position;
    for (const s of this.segments.filter((s) => s.seq < position.segment)) rmSync(this.path(s.seq), { force: true });
    this.segments = this.segments.filter((s) => s.seq >= position.segment);
    this.saveCursorSoon();
  }

  /**
   * Saves the cursor at most every CURSOR_SAVE_MS: after a crash, delivery resumes at most that
   * much before where it was (lines sent twice, never lost), for one file write per period
   * rather than one per batch.
   */
  private saveCursorSoon(): void {
    if (this.cursorTimer) return;
    const wait = this.cursorSavedAt + CURSOR_SAVE_MS - Date.now();
    if (wait <= 0) return this.saveCursor();
    this.cursorTimer = setTimeout(() => {
      this.cursorTimer = undefined;
      this.saveCursor();
    }, wait);
    this.cursorTimer.unref();
  }

  private saveCursor(): void {
    if (this.cursorTimer) clearTimeout(this.cursorTimer);
    this.cursorTimer = undefined;
    this.cursorSavedAt = Date.now();
    const file = join(this.dir, 'cursor.json');
    try {
      writeFileSync(`${file}.tmp`, JSON.stringify({ ...this.cursor, dropped: this.dropped }), { mode: 0o600 });
      renameSync(`${file}.tmp`, file);
    } catch (error) {
      // The next save tries again; meanwhile a restart would resend from the last saved cursor.
      this.onError(error as Error);
    }
  }

  /** Writes what is queued and where delivery stands, and lets go of the timers (the daemon stops). */
  close(): void {
    this.flush();
    this.saveCursor();
  }

  /** A removed drain's lines go with it. */
  destroy(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    if (this.cursorTimer) clearTimeout(this.cursorTimer);
    this.queue = [];
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
}
