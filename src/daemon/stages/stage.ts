import type { DaemonOptions } from '../options.js';
import type { Lifecycle } from '../lifecycle.js';
import type { Stoppers } from '../stoppers.js';

/** What every stage may use: the daemon's options, its log and where each stage registers its stop. */
export interface DaemonBase {
  options: DaemonOptions;
  log(line: string): void;
  stoppers: Stoppers;
  /** Where the rooms a stage built subscribe to what happens in an app's life (an app deleted, an instance replaced). */
  lifecycle: Lifecycle;
  /** Tells the daemon that `slipway system stop` stopped the data plane: the daemon stops too. */
  markSystemStopped(): void;
}

/**
 * One stage of the daemon's start (`Daemon.start()` lists them in order). A stage builds one
 * thing from what the stages before it provided (its parameter's type says what it needs),
 * registers the stop of what it built on `stoppers` right after building it, and returns what
 * it provides to the stages after it.
 */
export type Stage<Needs, Provides extends object> = (needs: Needs) => Provides | Promise<Provides>;

/**
 * Runs a stage on what was built so far and adds what it provides. A name provided twice is
 * a mistake in the order of the stages, refused rather than silently shadowed.
 */
export function stage<Needs, Provides extends object>(run: Stage<Needs, Provides>) {
  return async <Built extends Needs & object>(built: Built): Promise<Built & Provides> => {
    const provided = await run(built);
    const twice = Object.keys(provided).filter((name) => name in built);
    if (twice.length) throw new Error(`The daemon's stage ${run.name} provides ${twice.join(', ')} again.`);
    return { ...built, ...provided };
  };
}

/** What the stages built of the existing setup modules provide, named for the needs of later stages. */
export type SandboxesBuilt = Awaited<ReturnType<typeof import('./sandboxes.js').startSandboxes>>;
export type NetworkBuilt = Awaited<ReturnType<typeof import('./network.js').startNetwork>>;
export type EdgeBuilt = Awaited<ReturnType<typeof import('./edge.js').startEdge>>;
export type Told = ReturnType<typeof import('./events.js').platformEvents>;
