/** One reading of an instance's CPU time. */
interface Reading {
  seconds: number;
  at: number;
}

/**
 * Turns readings of each instance's cumulative CPU time into its CPU use over the interval
 * between two readings, in % of one core, by the times they were read. An instance seen for the
 * first time, or whose count went back (a restart after a crash makes a new sandbox), has no
 * rate this time; one whose backend has no new reading yet (it polls its figures) keeps its last.
 */
export class CpuRates {
  private readonly last = new Map<string, Reading & { rate?: number }>();

  /** The average rate of the instances that have one, undefined when none has. */
  average(readings: ReadonlyArray<{ id: string; seconds: number | undefined; at: number }>): number | undefined {
    const rates: number[] = [];
    const seen = new Set<string>();
    for (const { id, seconds, at } of readings) {
      seen.add(id);
      if (seconds === undefined) {
        this.last.delete(id);
        continue;
      }
      const before = this.last.get(id);
      if (before && at === before.at && seconds === before.seconds) {
        if (before.rate !== undefined) rates.push(before.rate);
        continue;
      }
      const rate =
        before && seconds >= before.seconds && at > before.at ? ((seconds - before.seconds) * 1000 * 100) / (at - before.at) : undefined;
      this.last.set(id, { seconds, at, ...(rate === undefined ? {} : { rate }) });
      if (rate !== undefined) rates.push(rate);
    }
    for (const id of this.last.keys()) if (!seen.has(id)) this.last.delete(id);
    return rates.length === 0 ? undefined : rates.reduce((a, b) => a + b, 0) / rates.length;
  }
}
