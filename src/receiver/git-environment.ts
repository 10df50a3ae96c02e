/**
 * The environment for git processes the receiver starts: the daemon's own environment minus
 * every GIT_* variable, since one such as GIT_DIR or GIT_INDEX_FILE inherited from wherever the
 * daemon was started would point git at another repository.
 */
export function gitEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('GIT_')) env[name] = value;
  }
  return { ...env, ...extra };
}
