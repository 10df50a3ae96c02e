/**
 * Work for one key (an app) run one piece after the other: each starts once the one before it
 * ended, whether it succeeded or failed; keys do not wait for each other. A key with nothing under
 * way holds nothing.
 */
export class Turns {
  private readonly last = new Map<string, Promise<void>>();

  run(key: string, work: () => Promise<void>): Promise<void> {
    const previous = this.last.get(key) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(work);
    this.last.set(key, next);
    next
      .finally(() => {
        if (this.last.get(key) === next) this.last.delete(key);
      })
      .catch(() => undefined);
    return next;
  }

  /** Resolves once the work under way for `key`, if any, has ended (however it ended). */
  async settled(key: string): Promise<void> {
    await this.last.get(key)?.catch(() => undefined);
  }
}
