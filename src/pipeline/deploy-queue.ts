/**
 * What a deployment's turn is: it was cancelled while it waited (it never starts), or it runs
 * with a signal that cancels it.
 */
export type Turn = { cancelledBeforeStart: string } | { cancelledBeforeStart?: undefined; signal: AbortSignal };

/**
 * Deployments run one at a time per app, in the order they were queued (a push during a
 * deployment waits its turn); apps do not wait for each other. The queue also knows what
 * cancels each: the running one is aborted, a waiting one is told so when its turn comes.
 */
export class DeployQueue {
  private readonly queues = new Map<string, Promise<void>>();
  /** The deployment running for each app, with what cancels it. */
  private readonly running = new Map<string, { deploymentId: string; cancel: AbortController }>();
  /** Queued deployments cancelled before their turn came. */
  private readonly cancelledInQueue = new Map<string, string>();
  /** Deployments waiting their turn, per app. */
  private readonly waiting = new Map<string, Set<string>>();

  /** Queues `run` after the app's earlier deployments; a failure of one never stops the next. */
  add(appId: string, deploymentId: string, run: (turn: Turn) => Promise<void>): void {
    const previous = this.queues.get(appId) ?? Promise.resolve();
    let waiting = this.waiting.get(appId);
    if (!waiting) this.waiting.set(appId, (waiting = new Set()));
    waiting.add(deploymentId);
    const turn = previous.then(() => {
      waiting.delete(deploymentId);
      return this.take(appId, deploymentId, run);
    });
    const tail = turn.catch(() => undefined);
    this.queues.set(appId, tail);
    void tail.then(() => {
      if (this.queues.get(appId) === tail) this.queues.delete(appId);
    });
  }

  private async take(appId: string, deploymentId: string, run: (turn: Turn) => Promise<void>): Promise<void> {
    const reason = this.cancelledInQueue.get(deploymentId);
    if (reason !== undefined) {
      this.cancelledInQueue.delete(deploymentId);
      return run({ cancelledBeforeStart: reason });
    }
    const cancel = new AbortController();
    this.running.set(appId, { deploymentId, cancel });
    try {
      await run({ signal: cancel.signal });
    } finally {
      if (this.running.get(appId)?.deploymentId === deploymentId) this.running.delete(appId);
    }
  }

  /**
   * Cancels the app's running deployment and, with `queuedToo`, the ones waiting their turn.
   * Returns the ids of the deployments cancelled.
   */
  cancel(appId: string, reason: string, queuedToo = false): string[] {
    const cancelled: string[] = [];
    const current = this.running.get(appId);
    if (current && !current.cancel.signal.aborted) {
      current.cancel.abort(reason);
      cancelled.push(current.deploymentId);
    }
    if (queuedToo) {
      for (const id of this.waiting.get(appId) ?? []) {
        this.cancelledInQueue.set(id, reason);
        cancelled.push(id);
      }
    }
    return cancelled;
  }

  /** Every deployment running or waiting is cancelled, and this waits for them to end. */
  async cancelAll(reason: string): Promise<void> {
    for (const appId of new Set([...this.running.keys(), ...this.waiting.keys()])) this.cancel(appId, reason, true);
    await this.idle();
  }

  /** Whether a deployment of the app is running or waiting its turn. */
  busy(appId: string): boolean {
    return this.queues.has(appId);
  }

  /** Resolves once every queued deployment has ended. */
  async idle(): Promise<void> {
    await Promise.all([...this.queues.values()]);
  }
}
