import type { CronJobSpec } from '../cron/cron-file.js';

/** What is needed to start an instance of a built release again, without rebuilding. */
export interface ReleaseSpec {
  deploymentId: string;
  commit: string;
  provider: string;
  releaseDir: string;
  start: string[];
  beforeStart: string[][];
  /** Variables the plan adds (never secrets). */
  planEnv: Record<string, string>;
  /** Toolchain bin folders, first on PATH. */
  toolPath: string[];
  /**
   * What its CC_PRE_RUN_HOOK wrote into the app's folder (src/pipeline/pre-run-layer.ts): a
   * read-only layer above the release folder in every sandbox of the release. Absent when the
   * hook has not run for this release.
   */
  preRunLayer?: string;
  /** The jobs of its clevercloud/cron.json (absent in releases built before cron jobs existed). */
  cron?: CronJobSpec[];
}

export function parseReleaseSpec(json: string): ReleaseSpec {
  const spec = JSON.parse(json) as ReleaseSpec;
  if (!Array.isArray(spec.start) || typeof spec.releaseDir !== 'string') throw new Error('malformed release record');
  return spec;
}
