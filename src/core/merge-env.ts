/**
 * The environment an application receives at build and run time comes from three kinds of
 * source. When two sources set the same name, the more specific one wins:
 *
 *   linked apps' exposed configuration  <  linked add-ons' variables  <  the app's own variables
 *
 * - The app's own setting always wins: it is the one thing its owner set for this app alone,
 *   so it is the way to override anything (e.g. point REDIS_URL somewhere else).
 * - An add-on wins over a linked app: the add-on's credentials describe a resource the app is
 *   wired to directly, while another app's exposed configuration is second-hand.
 * - Among sources of the same kind, the one linked later wins.
 *
 * `slipway env` shows the sections in the reverse order (the app's own first, then each
 * add-on, then each linked app), so the first line for a name is the value the app gets.
 * Platform variables (PORT, APP_ID, INSTANCE_ID...) are added after all of these and cannot
 * be overridden: see src/core/injected-env.ts.
 */

export type EnvSourceKind = 'application' | 'add-on' | 'linked-app';

export interface EnvVarEntry {
  name: string;
  value: string;
}

export interface EnvSection {
  kind: EnvSourceKind;
  /** What `slipway env` prints above the section: "application", "add-on db (postgresql)"... */
  source: string;
  env: EnvVarEntry[];
}

const PRECEDENCE: Record<EnvSourceKind, number> = { 'linked-app': 0, 'add-on': 1, application: 2 };

/** Sections from the weakest to the strongest; the order within a kind is kept. */
export function byPrecedence(sections: readonly EnvSection[]): EnvSection[] {
  return sections
    .map((section, index) => ({ section, index }))
    .sort((a, b) => PRECEDENCE[a.section.kind] - PRECEDENCE[b.section.kind] || a.index - b.index)
    .map(({ section }) => section);
}

/** Sections as `slipway env` shows them: the app's own, then add-ons, then linked apps. */
export function forDisplay(sections: readonly EnvSection[]): EnvSection[] {
  const weakestFirst = byPrecedence(sections);
  // Within a kind the later link wins, so it is shown first too.
  return weakestFirst.reverse();
}

/** The variables an app receives: every section merged, the stronger overriding the weaker. */
export function mergeEnv(sections: readonly EnvSection[]): Record<string, string> {
  const merged: Record<string, string> = {};
  for (const section of byPrecedence(sections)) {
    for (const { name, value } of section.env) merged[name] = value;
  }
  return merged;
}
