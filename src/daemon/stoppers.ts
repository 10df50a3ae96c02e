import type { Server } from 'node:http';

/**
 * How far a stop goes. `control`: the daemon alone (SIGTERM, SIGINT, an upgrade); the router,
 * the instances, their workers and the add-on servers go on serving and the next daemon adopts
 * them. `all`: `slipway system stop`, which drains and stops the data plane too.
 */
export type StopScope = 'control' | 'all';

export type Stopper = () => Promise<void> | void;

/**
 * What the daemon started, in the order it started it, stopped in reverse: each part is
 * registered right after it starts, so a part stops only once nothing started after it (and
 * perhaps using it) still runs. Kept apart from the daemon so that every setup step registers
 * its own parts the same way.
 */
export class Stoppers {
  private readonly stoppers: Array<{ name: string; stop: Stopper; detach: Stopper }> = [];

  /** A part of the control plane: stopped whatever the scope. */
  control(name: string, stop: Stopper): void {
    this.stoppers.push({ name, stop, detach: stop });
  }

  /**
   * A part of the data plane: `stop` ends it (`system stop`), `detach` lets the daemon go while
   * it goes on serving (what the daemon holds of it is released, nothing of it is stopped).
   */
  dataPlane(name: string, stop: Stopper, detach: Stopper): void {
    this.stoppers.push({ name, stop, detach });
  }

  /** Stops every part, last started first; a part that fails to stop is logged, not in the way. */
  async stopAll(scope: StopScope, log: (line: string) => void): Promise<void> {
    while (this.stoppers.length) {
      const { name, stop, detach } = this.stoppers.pop()!;
      try {
        await (scope === 'all' ? stop : detach)();
      } catch (error) {
        log(`While stopping the ${name}: ${(error as Error).message}`);
      }
    }
  }
}

/** Closes an HTTP server the daemon started, cutting its open connections rather than waiting on them. */
export function closeServer(server: Server, graceMs = 5_000): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    // An upgraded connection (a `slipway run` session) is no longer the HTTP server's to close and
    // holds close() until it ends; its command is killed before this, but one still starting then
    // would hold the stop for as long as it runs. The daemon stops anyway: the socket ends with it.
    const timer = setTimeout(resolve, graceMs);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
