import type { Provider } from './plan.js';
import { makeNodeProvider } from './node/node-provider.js';
import { sbtProvider } from './sbt/sbt-provider.js';

/** One provider per application type. */
export function makeProviders(): ReadonlyMap<string, Provider> {
  return new Map<string, Provider>([
    ['node', makeNodeProvider()],
    ['sbt', sbtProvider],
  ]);
}
