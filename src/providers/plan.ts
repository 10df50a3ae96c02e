/**
 * A build plan is data: everything the pipeline needs to build and start an app,
 * decided before anything runs, so it can be printed, tested and compared.
 */

/** Tools a plan needs, each at an exact version, fetched into the shared toolchain cache. */
export type ToolName = 'node' | 'npm' | 'bun' | 'pnpm' | 'yarn' | 'deno' | 'sbt' | 'java';

export interface ToolRequest {
  name: ToolName;
  /** Exact version (for `java`: the major version of an installed JDK). */
  version: string;
  /** Why this version: shown in the printed plan. */
  reason: string;
}

/** One command, as an argv array: never a shell string assembled from user input. */
export interface PlanCommand {
  /** Short label printed in the deploy log before the command runs. */
  label: string;
  argv: string[];
  /** Working directory relative to the build folder; defaults to the build folder. */
  cwd?: string;
  /** Extra variables for this command only. */
  env?: Record<string, string>;
}

/** A file the pipeline writes into the build folder before the install phase. */
export interface PlanFile {
  /** Path relative to the build folder. */
  path: string;
  content: string;
  /** Secret files are removed before the release is started and never printed. */
  secret: boolean;
  /** File mode, default 0o644 (0o600 for secret files). */
  mode?: number;
}

export interface BuildPlan {
  provider: string;
  toolchain: ToolRequest[];
  /** Variables added to the build and run environment (never secrets: they are printed). */
  env: Record<string, string>;
  /** Files written before the build (for example a generated .npmrc). */
  files: PlanFile[];
  /** Build phase, run in order; the first failing step fails the build. */
  build: PlanCommand[];
  /** Run phase: commands run before the start command, each must succeed (e.g. prestart). */
  beforeStart: PlanCommand[];
  /** The long-running process of an instance. */
  start: PlanCommand;
  /** Paths (relative to the build folder) kept between builds of the same app. */
  cacheDirs: string[];
  /**
   * Among cacheDirs, those the release needs too (installed dependencies such as node_modules):
   * the cache keeps a copy of them after a successful build instead of moving them out.
   */
  cacheDirsInRelease?: string[];
  /**
   * What the kept folders depend on besides the toolchain's major versions (an exact tool
   * version, a build option): when any of them changes, the next build starts from an empty cache.
   */
  cacheKeyInputs?: string[];
  /** Things the user should change; printed in the deploy log, never fatal. */
  warnings: string[];
  /** Why each choice was made; printed with the plan. */
  notes: string[];
}

/** What a provider is given to make a plan. */
export interface PlanContext {
  /**
   * Folder holding the exported commit (no .git). Hostile input, read as root: open its files
   * only through `repositoryTree(sourceDir)` (src/sandbox/untrusted-tree.ts), never with `fs`;
   * the rule and why are in src/sandbox/README.md.
   */
  sourceDir: string;
  /** The application's type as created (`node`, `sbt`). */
  appType: string;
  /** Every variable the app will see: its own, add-ons', linked apps'. */
  env: Record<string, string>;
  /** Versions published for a tool, to resolve ranges against (ascending or any order). */
  catalog: VersionCatalog;
}

export interface VersionCatalog {
  /** All exact versions available for a tool, as plain semver strings. */
  versions(tool: ToolName): Promise<string[]>;
}

/** A build failure the user can fix: the message says what was seen and what to do. */
export class PlanError extends Error {
  constructor(message: string, readonly hint?: string) {
    super(message);
    this.name = 'PlanError';
  }
}

export interface Provider {
  /** Name matching the application type (`node`, `sbt`). */
  readonly name: string;
  /** True when the source folder looks like this provider's kind of app (read through the untrusted tree too). */
  detect(sourceDir: string): Promise<boolean>;
  /** Makes the plan or throws PlanError. */
  plan(context: PlanContext): Promise<BuildPlan>;
}
