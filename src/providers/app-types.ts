/**
 * The application types, one per provider, by name and label: what the API accepts, `slipway
 * create --type` offers and the console shows. Each provider takes its name and label from here,
 * and registry.ts lists the providers themselves (registry.test.ts holds both lists equal). The
 * list stands apart so that reading it loads no provider: the CLI reads it at each start, and
 * the providers bring semver, YAML and TOML parsers with them (some 70 ms of loading).
 */
export interface AppTypeInfo {
  name: string;
  label: string;
}

export const NODE_APP_TYPE: AppTypeInfo = { name: 'node', label: 'Node.js or Bun' };
export const SBT_APP_TYPE: AppTypeInfo = { name: 'sbt', label: 'Scala or Java built with sbt' };

export const APP_TYPES: readonly AppTypeInfo[] = [NODE_APP_TYPE, SBT_APP_TYPE];
