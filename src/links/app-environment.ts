import type { Store } from '../store/store.js';
import type { AddonManager } from '../addons/addon-manager.js';
import { forDisplay, mergeEnv, type EnvSection } from '../core/merge-env.js';

/**
 * Every source of an app's variables: its own, each linked add-on's, each linked app's
 * exposed configuration, in link order. The precedence between them is mergeEnv's
 * (src/core/merge-env.ts): own > add-on > linked app.
 */
export function appEnvSections(store: Store, addons: AddonManager, appId: string): EnvSection[] {
  const sections: EnvSection[] = [{ kind: 'application', source: 'application', env: store.env.list(appId) }];
  for (const addon of store.links.addonsOf(appId)) {
    const env = Object.entries(addons.env(addon)).map(([name, value]) => ({ name, value }));
    sections.push({ kind: 'add-on', source: `add-on ${addon.name} (${addon.provider})`, env });
  }
  for (const target of store.links.targetsOf(appId)) {
    sections.push({ kind: 'linked-app', source: `linked app ${target.name}`, env: store.publishedConfig.list(target.id) });
  }
  return sections;
}

/** THE environment an app gets at build and run time (before the platform's own variables). */
export function appEnvironment(store: Store, addons: AddonManager, appId: string): Record<string, string> {
  return mergeEnv(appEnvSections(store, addons, appId));
}

/** The sections as `slipway env` and the console show them, without the internal kind. */
export function appEnvForDisplay(
  store: Store,
  addons: AddonManager,
  appId: string,
): Array<{ source: string; env: Array<{ name: string; value: string }> }> {
  return forDisplay(appEnvSections(store, addons, appId)).map(({ source, env }) => ({ source, env }));
}
