import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConflictError } from '../core/errors.js';
import { OneOffRuns, type RunningOneOff } from './one-off-runs.js';

/** A command that ends when it gets SIGKILL, and says what it got. */
function command(): RunningOneOff & { signals: string[] } {
  let end: () => void = () => undefined;
  const signals: string[] = [];
  return {
    signals,
    done: new Promise<void>((resolve) => (end = resolve)),
    signal: async (signal) => {
      signals.push(signal);
      setTimeout(end, 20);
    },
  };
}

test("ending an app's commands kills them all, waits for them and refuses new ones until reopened", async () => {
  const runs = new OneOffRuns();
  const mine = [command(), command()];
  const other = command();
  for (const run of mine) runs.track('app_a', run);
  runs.track('app_b', other);
  assert.equal(runs.count('app_a'), 2);
  runs.checkOpen('app_a');
  await runs.endAll('app_a');
  assert.deepEqual(
    mine.map((r) => r.signals),
    [['SIGKILL'], ['SIGKILL']],
  );
  assert.equal(runs.count('app_a'), 0, 'both ended before endAll resolved');
  assert.deepEqual(other.signals, [], "another app's command is left alone");
  assert.throws(() => runs.checkOpen('app_a'), ConflictError);
  runs.checkOpen('app_b');
  runs.reopen('app_a');
  runs.checkOpen('app_a');
});
