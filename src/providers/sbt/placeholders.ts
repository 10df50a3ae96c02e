/**
 * Paths an sbt plan cannot know when it is made, written into its argv as `${NAME}` tokens and
 * filled by prepareSbtPlan once the toolchain is fetched:
 *
 *   ${SLIPWAY_SBT_LAUNCHER}      the launcher jar in the shared toolchain cache
 *   ${SLIPWAY_SBT_REPOSITORIES}  the repositories file (local + the machine's Maven repository)
 *   ${SLIPWAY_APP_CACHE}         the app's own cache folder, kept between its builds; sbt's
 *                                boot, ivy, coursier and global folders live under <it>/sbt/
 *   ${SLIPWAY_SBT_STAGED_BINARY} the staged binary, known only after the build (resolveSbtBinary)
 *
 * User input never reaches these tokens: SBT_DEPLOY_GOAL is validated to contain no `$`.
 */
export const PLACEHOLDER = {
  launcher: '${SLIPWAY_SBT_LAUNCHER}',
  repositories: '${SLIPWAY_SBT_REPOSITORIES}',
  appCache: '${SLIPWAY_APP_CACHE}',
  stagedBinary: '${SLIPWAY_SBT_STAGED_BINARY}',
} as const;

export interface PlaceholderValues {
  launcher?: string;
  repositories?: string;
  appCache?: string;
  stagedBinary?: string;
}

/** Replaces the known tokens; unknown text is left exactly as it is. */
export function fillPlaceholders(argv: string[], values: PlaceholderValues): string[] {
  return argv.map((arg) => {
    let out = arg;
    for (const key of Object.keys(PLACEHOLDER) as Array<keyof typeof PLACEHOLDER>) {
      const value = values[key];
      if (value !== undefined) out = out.split(PLACEHOLDER[key]).join(value);
    }
    return out;
  });
}

/** True when an argv still holds a token (the pipeline must not run it as is). */
export function hasPlaceholder(argv: string[]): boolean {
  return argv.some((arg) => Object.values(PLACEHOLDER).some((token) => arg.includes(token)));
}
