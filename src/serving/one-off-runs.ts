import { ConflictError } from '../core/errors.js';

/** What is kept of a running one-off command: enough to end it and to know it ended. */
export interface RunningOneOff {
  signal(signal: 'SIGKILL'): Promise<void>;
  readonly done: Promise<unknown>;
}

/**
 * The one-off commands running for each app (`slipway run` and cron runs alike), so that
 * deleting an app ends them all, and none starts once its deletion began.
 */
export class OneOffRuns {
  private readonly running = new Map<string, Set<RunningOneOff>>();
  private readonly closed = new Set<string>();

  /** Throws while the app is being deleted: nothing of it may start any more. */
  checkOpen(appId: string): void {
    if (this.closed.has(appId)) {
      throw new ConflictError(
        'This application is being deleted: no command starts in it any more.',
        'Nothing to do; it is gone in a moment.',
      );
    }
  }

  /** Keeps `run` until it ends. */
  track(appId: string, run: RunningOneOff): void {
    const runs = this.running.get(appId) ?? new Set();
    runs.add(run);
    this.running.set(appId, runs);
    const forget = () => {
      runs.delete(run);
      if (runs.size === 0 && this.running.get(appId) === runs) this.running.delete(appId);
    };
    void run.done.then(forget, forget);
  }

  /** How many commands of the app run now. */
  count(appId: string): number {
    return this.running.get(appId)?.size ?? 0;
  }

  /**
   * The app is being deleted: no new command starts, the running ones are killed; resolves once
   * they all ended. `reopen` undoes the closing when the deletion failed.
   */
  async endAll(appId: string): Promise<void> {
    this.closed.add(appId);
    const runs = [...(this.running.get(appId) ?? [])];
    await Promise.all(runs.map((run) => run.signal('SIGKILL').catch(() => undefined)));
    await Promise.all(runs.map((run) => run.done.catch(() => undefined)));
  }

  reopen(appId: string): void {
    this.closed.delete(appId);
  }
}
