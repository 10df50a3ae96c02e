/**
 * A build plan is data: everything the pipeline needs to build and start an app,
 * decided before anything runs, so it can be printed, tested and compared.
 */

import type { ToolName, VersionCatalog } from '../toolchains/tools.js';

export type { ToolName, VersionCatalog } from '../toolchains/tools.js';

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
  /**
   * The command as the user wrote it and where, when argv wraps it in slipway's own plumbing
   * (scripts.start run by bash with npm's variables): the printed plan shows this instead of a
   * wrapper nobody wrote; argv stays the exact command, in `--format json` too.
   */
  written?: WrittenCommand;
  /**
   * An install whose whole result is in the kept folders the release needs (cacheDirsInRelease):
   * when those folders were made by a successful build that ran this same command with the same
   * files and settings, it is not run again (see src/pipeline/install-inputs.ts).
   */
  skipWhenUnchanged?: InstallInputs;
}

/** A command in the user's own words: `node server.js`, from `scripts.start in package.json`. */
export interface WrittenCommand {
  command: string;
  source: string;
}

/** What an install reads: files of the build folder (by path) and settings (plain words, no secret). */
export interface InstallInputs {
  files: string[];
  settings: string[];
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
  /**
   * Memory the build's sandbox may use (its build flavour), for tools that size themselves
   * from it: inside the sandbox they cannot see the limit. Absent: the default build flavour's.
   */
  buildMemoryBytes?: number;
}

/** A build failure the user can fix (core/errors.ts): re-exported for the providers. */
export { PlanError } from '../core/errors.js';

/** What a provider needs to make its plan runnable once the tools are fetched. */
export interface PrepareContext {
  /** Shared toolchain cache (tools, launchers). */
  toolchainCacheDir: string;
  /** The app's own cache folder, kept between its builds. */
  appCacheDir: string;
  log(line: string): void;
}

/**
 * A runtime, whole: everything the pipeline needs to know about one kind of app goes through
 * these methods, so the pipeline names no runtime and a new one touches only its own folder
 * (ARCHITECTURE.md, "A runtime").
 */
export interface Provider {
  /** Name matching the application type (`node`, `sbt`). */
  readonly name: string;
  /** How the API's schema, `slipway create --help` and the console's creation page name the type. */
  readonly label: string;
  /** True when the source folder looks like this provider's kind of app (read through the untrusted tree too). */
  detect(sourceDir: string): Promise<boolean>;
  /** Said when detect() found nothing: what it looked for, and what to do. */
  notDetected(): { message: string; hint: string };
  /** Makes the plan or throws PlanError. */
  plan(context: PlanContext): Promise<BuildPlan>;
  /**
   * Makes the plan runnable once its tools are in the cache: fills in what was not known when it
   * was made (a launcher's path). The deploy log prints the plan this returns, as it will run;
   * `toolPath` lists folders to put first on PATH besides the fetched tools'.
   */
  prepare?(plan: BuildPlan, context: PrepareContext): Promise<{ plan: BuildPlan; toolPath: string[] }>;
  /**
   * What prepare() would fill in, without fetching or writing anything (`slipway plan`): the
   * paths the build will use, with a note for each that is not in the cache yet.
   */
  preview?(plan: BuildPlan, context: Pick<PrepareContext, 'toolchainCacheDir' | 'appCacheDir'>): Promise<BuildPlan>;
  /**
   * After a successful build, the start command when the plan could only describe it (sbt's
   * staged script, named by the build). Throws PlanError when it cannot be found.
   */
  resolveStart?(buildDir: string, plan: BuildPlan, env: Record<string, string>): Promise<string[]>;
  /** What to do about a failed build step, when its output shows a failure this runtime knows. */
  explainFailure?(outputLines: string[]): string | undefined;
  /**
   * Variables a process of a release (instance, worker, hook, one-off command) gets from the
   * memory of its sandbox, for a runtime that cannot see the limit there (the JVM); `env` is
   * the app's own. Called at each start: the flavour may change without a rebuild.
   */
  runtimeEnv?(memoryBytes: number, env: Record<string, string>): Record<string, string>;
}
