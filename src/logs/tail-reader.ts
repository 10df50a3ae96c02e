import { read } from 'node:fs';
import { closeAll, type StoredFile } from './log-files.js';

/** A log as it stood at one moment: its files (oldest first) and the lines not yet written. */
export interface LogSnapshot {
  files: StoredFile[];
  /** Serialized lines still queued for the disk, oldest first, each ending with a newline. */
  pending: string[];
}

export interface TailOptions {
  /** Only the last `lines` lines. */
  lines?: number;
  /** Only lines written at or after this time (an ISO time as `Date#toISOString` writes it). */
  since?: string;
}

/** A line's start: a byte offset in `files[file]`, or the index of a pending line when `file` is `files.length`. */
export interface LinePosition {
  file: number;
  offset: number;
}

export const READ_CHUNK_BYTES = 64 * 1024;
/** Longer lines are skipped when read (the daemon writes none: lines are cut at 64 Ki characters). */
const MAX_STORED_LINE_BYTES = 1024 * 1024;
/** Enough of a line's start to hold `{"time":"<ISO time>"`. */
const TIME_PREFIX_BYTES = 64;
const NEWLINE = 0x0a;

/**
 * The lines of a snapshot that `options` asks for, as chunks of whole NDJSON lines: the start
 * is found by reading backwards from the end in chunks (counting newlines, reading only the
 * time at the start of each line), then the files are read forwards from there. Memory stays
 * at a few chunks whatever the size of the files or of a line. Closes the files at the end.
 */
export async function* readTail(snapshot: LogSnapshot, options: TailOptions = {}, chunkBytes = READ_CHUNK_BYTES): AsyncGenerator<Buffer> {
  try {
    const start = await findTailStart(snapshot, options, chunkBytes);
    yield* readForward(snapshot, start, chunkBytes);
  } finally {
    closeAll(snapshot.files);
  }
}

export async function findTailStart(snapshot: LogSnapshot, options: TailOptions, chunkBytes = READ_CHUNK_BYTES): Promise<LinePosition> {
  const { files, pending } = snapshot;
  const { lines, since } = options;
  if (lines === undefined && since === undefined) return { file: 0, offset: 0 };
  let start: LinePosition = { file: files.length, offset: pending.length };
  if (lines === 0) return start;
  let counted = 0;
  /** Takes the line at `position` (met newest first); true once the tail is complete. */
  const take = (position: LinePosition, time: () => string | undefined): boolean => {
    if (since !== undefined) {
      const t = time();
      if (t !== undefined && t < since) return true;
    }
    start = position;
    counted++;
    return lines !== undefined && counted >= lines;
  };
  for (let i = pending.length - 1; i >= 0; i--) {
    if (take({ file: files.length, offset: i }, () => timeOf(pending[i]!))) return start;
  }
  for (let f = files.length - 1; f >= 0; f--) {
    if (await scanBackwards(files[f]!, f, take, chunkBytes)) return start;
  }
  return start;
}

/** Offers every line start of one file to `take`, last line first; true when `take` said stop. */
async function scanBackwards(
  file: StoredFile,
  index: number,
  take: (position: LinePosition, time: () => string | undefined) => boolean,
  chunkBytes: number,
): Promise<boolean> {
  // The first bytes of the chunk read before (the one after this one): a line's time may continue there.
  let after = Buffer.alloc(0);
  for (let end = file.size; end > 0; ) {
    const at = Math.max(0, end - chunkBytes);
    const chunk = await readAt(file.fd, at, end - at);
    for (let i = chunk.lastIndexOf(NEWLINE); i >= 0; i = i === 0 ? -1 : chunk.lastIndexOf(NEWLINE, i - 1)) {
      const lineStart = at + i + 1;
      if (lineStart >= file.size) continue; // the newline that ends the file
      if (take({ file: index, offset: lineStart }, () => timeOf(prefix(chunk, i + 1, after)))) return true;
    }
    after = Buffer.from(prefix(chunk, 0, after));
    end = at;
  }
  return file.size > 0 && take({ file: index, offset: 0 }, () => timeOf(after));
}

function prefix(chunk: Buffer, from: number, after: Buffer): Buffer {
  if (chunk.length - from >= TIME_PREFIX_BYTES) return chunk.subarray(from, from + TIME_PREFIX_BYTES);
  return Buffer.concat([chunk.subarray(from), after]).subarray(0, TIME_PREFIX_BYTES);
}

/** The time a stored line starts with; every line the daemon writes begins `{"time":"`. */
function timeOf(start: Buffer | string): string | undefined {
  const text = typeof start === 'string' ? start.slice(0, TIME_PREFIX_BYTES) : start.toString('latin1');
  return /^\{"time":"([0-9T:.Z+-]{10,40})"/.exec(text)?.[1];
}

/** Whole lines from `start` to the end of the snapshot, a chunk at a time. */
export async function* readForward(snapshot: LogSnapshot, start: LinePosition, chunkBytes = READ_CHUNK_BYTES): AsyncGenerator<Buffer> {
  const { files, pending } = snapshot;
  for (let f = start.file; f < files.length; f++) {
    const file = files[f]!;
    // Bytes of a line that began in an earlier chunk; `skipping` once it grew beyond reason.
    let partial: Buffer[] = [];
    let partialBytes = 0;
    let skipping = false;
    for (let pos = f === start.file ? start.offset : 0; pos < file.size; ) {
      const chunk = await readAt(file.fd, pos, Math.min(chunkBytes, file.size - pos));
      if (chunk.length === 0) break; // the file shrank under us: nothing more to read
      pos += chunk.length;
      const lines: Buffer[] = [];
      let from = 0;
      for (let nl = chunk.indexOf(NEWLINE); nl >= 0; nl = chunk.indexOf(NEWLINE, from)) {
        let line = chunk.subarray(from, nl + 1);
        from = nl + 1;
        if (partial.length > 0) {
          line = Buffer.concat([...partial, line]);
          partial = [];
          partialBytes = 0;
        }
        if (skipping) skipping = false;
        else if (wellFormed(line)) lines.push(line);
      }
      if (from < chunk.length && !skipping) {
        partial.push(chunk.subarray(from));
        partialBytes += chunk.length - from;
        if (partialBytes > MAX_STORED_LINE_BYTES) {
          partial = [];
          partialBytes = 0;
          skipping = true;
        }
      }
      if (lines.length > 0) yield Buffer.concat(lines);
    }
    // Bytes after the last newline are a line cut short by a failed write: left out.
  }
  const firstPending = start.file < files.length ? 0 : start.offset;
  if (firstPending < pending.length) yield Buffer.from(pending.slice(firstPending).join(''));
}

/** A stored entry is one JSON object per line; anything else (a damaged line) is left out. */
function wellFormed(line: Buffer): boolean {
  return line.length >= 3 && line[0] === 0x7b /* { */ && line[line.length - 2] === 0x7d /* } */;
}

function readAt(fd: number, position: number, length: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const buffer = Buffer.allocUnsafe(length);
    read(fd, buffer, 0, length, position, (error, bytesRead) => (error ? reject(error) : resolve(buffer.subarray(0, bytesRead))));
  });
}
