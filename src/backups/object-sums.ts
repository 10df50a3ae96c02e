import { createHash } from 'node:crypto';
import { pipeline, type Readable, Transform } from 'node:stream';
import type { ObjectSum } from '../store/backup-object-sums.js';
import { BackupObjectDamaged, type BackupStore, type StoredObject } from './store/backup-store.js';

/** Where the sums are kept: the daemon's own database (store/backup-object-sums.ts), never the backup store. */
export interface ObjectSumBook {
  record(key: string, sum: ObjectSum): void;
  of(key: string): ObjectSum | undefined;
  forget(key: string): void;
}

/**
 * The stream handed on, with the size and SHA-256 of every byte that went through it, counted
 * as the reader takes them: no second read. (A listener of its own would start the flow before
 * the reader does.) `sum()` is read once, after the reader reached the end.
 */
export function summing(body: Readable): { stream: Readable; sum(): ObjectSum } {
  const hash = createHash('sha256');
  let size = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  // pipeline keeps a listener on both: a body failing before the reader listens is not an uncaught error,
  // and the reader finds the stream errored with the body's error.
  pipeline(body, counted, () => undefined);
  return { stream: counted, sum: () => ({ size_bytes: size, sha256: hash.digest('hex') }) };
}

/**
 * The backup store as the add-on backups write to it: every object put through it gets its size
 * and SHA-256 recorded in the book once it is whole in the store (a failed put records nothing
 * and leaves the previous sum, as the store leaves the previous object); a deleted one loses
 * its sum. The sum is of the bytes slipway wrote, before an encrypting store seals them, so it
 * holds whatever key the objects are sealed with and wherever they are copied.
 */
export class SumRecordingStore implements BackupStore {
  constructor(
    private readonly inner: BackupStore,
    private readonly book: ObjectSumBook,
  ) {}

  async put(key: string, body: Readable): Promise<{ sizeBytes: number }> {
    const summed = summing(body);
    const stored = await this.inner.put(key, summed.stream);
    this.book.record(key, summed.sum());
    return stored;
  }

  get(key: string): Promise<Readable> {
    return this.inner.get(key);
  }

  list(prefix: string): Promise<StoredObject[]> {
    return this.inner.list(prefix);
  }

  async delete(key: string): Promise<void> {
    await this.inner.delete(key);
    this.book.forget(key);
  }

  describe(): string {
    return this.inner.describe();
  }

  close(): void {
    this.inner.close?.();
  }
}

/** What a check found: how many objects matched their sums, and which had none to match. */
export interface SumCheck {
  checked: number;
  /** Objects stored before sums were recorded: used as they are, unchecked. */
  unchecked: string[];
}

/**
 * Checks objects of the backup store against the sums recorded when they were written, before a
 * verification, restore or download uses any of them: each is read whole and hashed, and the
 * first that differs (or is missing) stops it, named with what was recorded and what is there.
 */
export class ObjectSums {
  constructor(
    private readonly o: {
      store: BackupStore;
      book: ObjectSumBook;
      log(line: string): void;
    },
  ) {}

  /** `use` says what the objects are for, in the log line naming the unchecked ones. */
  async check(keys: readonly string[], use: string): Promise<SumCheck> {
    const unchecked: string[] = [];
    for (const key of keys) {
      const expected = this.o.book.of(key);
      if (!expected) {
        unchecked.push(key);
        continue;
      }
      const found = await sumOf(await this.o.store.get(key));
      if (found.size_bytes !== expected.size_bytes || found.sha256 !== expected.sha256) throw changed(key, expected, found);
    }
    if (unchecked.length > 0) this.logUnchecked(use, unchecked);
    return { checked: keys.length - unchecked.length, unchecked };
  }

  /** The objects of one restore, checked as they are read (ObjectCheckRound). */
  round(use: string): ObjectCheckRound {
    return new ObjectCheckRound(this, use);
  }

  recorded(key: string): ObjectSum | undefined {
    return this.o.book.of(key);
  }

  logUnchecked(use: string, unchecked: string[]): void {
    const named = unchecked.slice(0, 5).join(', ') + (unchecked.length > 5 ? ` and ${unchecked.length - 5} more` : '');
    this.o.log(`${use}: ${plural(unchecked.length, 'backup object')} stored before sums were recorded, used unchecked: ${named}.`);
  }
}

/** An object checked while it is read for its use (restoring a copy), not by a read of its own first. */
export interface ObjectReadCheck {
  /** What the reader reads: the object, hashed as it goes. */
  stream: Readable;
  /** Once the reader is done: rejects, naming the object, when it is not what was stored. */
  finish(): Promise<void>;
}

/**
 * The objects of one restore, each checked as the copy reads it: a restore reads each object
 * once, and the copy does not start before every object read matched (a reader that stopped
 * before the end has its object read again, whole). What was read unchecked is logged at the end.
 */
export class ObjectCheckRound {
  private checked = 0;
  private readonly unchecked: string[] = [];

  constructor(
    private readonly sums: ObjectSums,
    private readonly use: string,
  ) {}

  wrap(key: string, body: Readable): ObjectReadCheck {
    const expected = this.sums.recorded(key);
    if (!expected) {
      this.unchecked.push(key);
      return { stream: body, finish: async () => undefined };
    }
    const { stream, sum } = summing(body);
    let ended = false;
    stream.once('end', () => {
      ended = true;
    });
    return {
      stream,
      finish: async () => {
        if (!ended) {
          await this.sums.check([key], this.use);
        } else {
          const found = sum();
          if (found.size_bytes !== expected.size_bytes || found.sha256 !== expected.sha256) throw changed(key, expected, found);
        }
        this.checked++;
      },
    };
  }

  result(): SumCheck {
    if (this.unchecked.length > 0) this.sums.logUnchecked(this.use, this.unchecked);
    return { checked: this.checked, unchecked: [...this.unchecked] };
  }
}

/** One clause for a verification's account: "4 stored objects match their SHA-256; 2 stored before sums were recorded, not checked". */
export function describeSumCheck(check: SumCheck): string {
  const parts: string[] = [];
  if (check.checked > 0 || check.unchecked.length === 0) {
    parts.push(
      `${plural(check.checked, 'stored object')} match${check.checked === 1 ? 'es' : ''} ${check.checked === 1 ? 'its' : 'their'} SHA-256`,
    );
  }
  if (check.unchecked.length > 0) parts.push(`${check.unchecked.length} stored before sums were recorded, not checked`);
  return parts.join('; ');
}

export function objectChangedMessage(key: string, expected: ObjectSum, found: ObjectSum): string {
  return (
    `backup object ${key} changed since it was stored: ${expected.size_bytes} bytes with SHA-256 ${expected.sha256} ` +
    `were recorded, ${found.size_bytes} bytes with SHA-256 ${found.sha256} are there now`
  );
}

function changed(key: string, expected: ObjectSum, found: ObjectSum): BackupObjectDamaged {
  return new BackupObjectDamaged(
    key,
    objectChangedMessage(key, expected, found),
    'The backup store was damaged or altered after the backup: use another backup, and check the disk or bucket the store is on.',
  );
}

async function sumOf(body: Readable): Promise<ObjectSum> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { size_bytes: size, sha256: hash.digest('hex') };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
