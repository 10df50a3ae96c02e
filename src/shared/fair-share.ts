/**
 * Sharing a few slots between tenants so that one tenant's slow work (a receiver that never
 * answers, a download nobody reads) delays only that tenant: each key (an organisation) runs at
 * most `perKey` at once, all keys together at most `total`, and keys take turns.
 */
export interface FairLimits {
  /** At once for one key. */
  perKey: number;
  /** At once over all keys. */
  total: number;
}

/**
 * Which of `candidates` (oldest first) to start now, given what each key runs already: keys
 * take turns, one item each per round (in the order of their oldest candidate), until the free
 * slots are used or no key may start more.
 */
export function fairPick<T>(
  candidates: readonly T[],
  keyOf: (item: T) => string,
  running: ReadonlyMap<string, number>,
  limits: FairLimits,
): T[] {
  let free = limits.total - [...running.values()].reduce((sum, n) => sum + n, 0);
  const byKey = new Map<string, T[]>();
  for (const item of candidates) {
    const key = keyOf(item);
    const list = byKey.get(key) ?? [];
    list.push(item);
    byKey.set(key, list);
  }
  const started = new Map<string, number>();
  const picked: T[] = [];
  for (let progress = true; free > 0 && progress; ) {
    progress = false;
    for (const [key, list] of byKey) {
      if (free <= 0) break;
      const count = (running.get(key) ?? 0) + (started.get(key) ?? 0);
      if (list.length === 0 || count >= limits.perKey) continue;
      picked.push(list.shift()!);
      started.set(key, (started.get(key) ?? 0) + 1);
      free--;
      progress = true;
    }
  }
  return picked;
}

interface Waiting {
  key: string;
  exclusive: boolean;
  start(): void;
}

/**
 * A queue of jobs shared fairly between keys: each key's jobs run in the order given, at most
 * `perKey` of one key and `total` of all at once, keys served in turn (a key just served goes
 * to the back). An exclusive job (one that touches every key's data, such as the daily backup
 * round and its retention) waits until nothing runs, and nothing starts while it waits or runs.
 */
export class FairJobs {
  private readonly waiting: Waiting[] = [];
  private readonly running = new Map<string, number>();
  private exclusiveRunning = false;
  /** When each key was last served (a rising count): the key served longest ago goes first. */
  private readonly servedAt = new Map<string, number>();
  private served = 0;

  constructor(private readonly limits: FairLimits) {}

  /** Runs `job` when its turn comes; resolves or rejects as it does. */
  run<T>(key: string, job: () => Promise<T>, options: { exclusive?: boolean } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const exclusive = options.exclusive === true;
      const done = () => {
        const left = (this.running.get(key) ?? 1) - 1;
        if (left > 0) this.running.set(key, left);
        else this.running.delete(key);
        if (exclusive) this.exclusiveRunning = false;
        // The next job starts after this one's caller heard of its end.
        queueMicrotask(() => this.next());
      };
      this.waiting.push({
        key,
        exclusive,
        start: () => {
          this.running.set(key, (this.running.get(key) ?? 0) + 1);
          if (exclusive) this.exclusiveRunning = true;
          let result: Promise<T>;
          try {
            result = job();
          } catch (error) {
            result = Promise.reject(error);
          }
          result.then(
            (value) => {
              done();
              resolve(value);
            },
            (error: unknown) => {
              done();
              reject(error);
            },
          );
        },
      });
      this.next();
    });
  }

  /** What runs now, per key (for tests and figures). */
  runningNow(): ReadonlyMap<string, number> {
    return this.running;
  }

  private total(): number {
    return [...this.running.values()].reduce((sum, n) => sum + n, 0);
  }

  private next(): void {
    for (;;) {
      if (this.exclusiveRunning) return;
      // An exclusive job waiting blocks every later one: it starts once the slots are empty.
      const exclusive = this.waiting.find((w) => w.exclusive);
      if (exclusive) {
        if (this.total() > 0) return;
        this.startJob(exclusive);
        return;
      }
      if (this.total() >= this.limits.total) return;
      let chosen: Waiting | undefined;
      for (const w of this.waiting) {
        if ((this.running.get(w.key) ?? 0) >= this.limits.perKey) continue;
        if (!chosen || (this.servedAt.get(w.key) ?? 0) < (this.servedAt.get(chosen.key) ?? 0)) chosen = w;
      }
      if (!chosen) return;
      this.startJob(chosen);
    }
  }

  private startJob(job: Waiting): void {
    this.waiting.splice(this.waiting.indexOf(job), 1);
    this.servedAt.set(job.key, ++this.served);
    job.start();
  }
}
