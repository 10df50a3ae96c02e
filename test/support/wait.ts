/**
 * Polls `probe` until it gives a value other than undefined or false, and returns that value;
 * fails after `timeoutMs`, naming what was waited for and the probe's last error. A probe may be
 * synchronous or not, and one that throws counts as "not yet". The pause between probes is a
 * tenth of the time waited so far, from 10 ms to 300 ms: a short wait ends promptly, a long one
 * (a build) does not keep a shared machine busy with probes. The one polling wait of the tests.
 */
export async function waitUntil<T>(what: string, probe: () => T | Promise<T>, timeoutMs = 60_000): Promise<Exclude<T, undefined | false>> {
  const started = Date.now();
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value as Exclude<T, undefined | false>;
    } catch (error) {
      lastError = error;
    }
    const waited = Date.now() - started;
    if (waited > timeoutMs) {
      const why = lastError instanceof Error ? `: ${lastError.message}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`);
    }
    await new Promise((r) => setTimeout(r, Math.min(300, Math.max(10, waited / 10))));
  }
}
