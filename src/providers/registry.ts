import type { AppTypeInfo } from './app-types.js';
import type { Provider } from './plan.js';
import { makeNodeProvider } from './node/node-provider.js';
import { sbtProvider } from './sbt/sbt-provider.js';

/** One provider per application type: the one list of runtimes, everything else reads it. */
export function makeProviders(): ReadonlyMap<string, Provider> {
  return new Map<string, Provider>([
    ['node', makeNodeProvider()],
    ['sbt', sbtProvider],
  ]);
}

export type { AppTypeInfo };

const APP_TYPES: readonly AppTypeInfo[] = [...makeProviders().values()].map((p) => ({ name: p.name, label: p.label }));

/**
 * The application types, one per provider: what the API accepts (and its schema lists),
 * `slipway create --type` offers, and the console's creation page shows (through the API).
 */
export function appTypes(): readonly AppTypeInfo[] {
  return APP_TYPES;
}
