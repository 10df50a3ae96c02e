/** Tools a plan can ask for, each at an exact version, fetched into the shared toolchain cache. */
export type ToolName = 'node' | 'npm' | 'bun' | 'pnpm' | 'yarn' | 'deno' | 'sbt' | 'java';

/** Where the versions published for a tool come from (the registry, or a fixed list in tests). */
export interface VersionCatalog {
  /** All exact versions available for a tool, as plain semver strings. */
  versions(tool: ToolName): Promise<string[]>;
}
