import path from 'node:path';

/**
 * A folder of the build that the package managers read as the user's own configuration
 * (npm_config_userconfig names the .npmrc in it, XDG_CONFIG_HOME the folder for Bun), so what
 * slipway sets for a build never changes a file of the project. It lives in .slipway-cache,
 * the platform's own folder of the build.
 */
export const USER_CONFIG_DIR = '.slipway-cache/config';

/**
 * Its absolute path: Bun ignores a relative XDG_CONFIG_HOME, and a lifecycle script may run
 * in another folder. The build runs with its folder at the same path, so this path holds there.
 */
export function userConfigDir(buildDir: string): string {
  return path.join(buildDir, USER_CONFIG_DIR);
}
