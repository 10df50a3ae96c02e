import { PlanError } from '../providers/plan.js';

const NUMBERED = /^CC_HEALTH_CHECK_PATH_(\d+)$/;

/**
 * The paths to check (SPEC §4.3): CC_HEALTH_CHECK_PATH and every CC_HEALTH_CHECK_PATH_<n>,
 * in that order (numbered ones by n); `/` when none is set.
 */
export function healthCheckPaths(env: Record<string, string | undefined>): string[] {
  const numbered = Object.keys(env)
    .map((name) => ({ name, match: NUMBERED.exec(name) }))
    .filter((e): e is { name: string; match: RegExpExecArray } => e.match !== null)
    .sort((a, b) => Number(a.match[1]) - Number(b.match[1]))
    .map((e) => ({ name: e.name, value: env[e.name]! }));
  const single = env.CC_HEALTH_CHECK_PATH !== undefined ? [{ name: 'CC_HEALTH_CHECK_PATH', value: env.CC_HEALTH_CHECK_PATH }] : [];
  const configured = [...single, ...numbered];
  if (configured.length === 0) return ['/'];
  const paths: string[] = [];
  for (const { name, value } of configured) {
    if (!value.startsWith('/') || /[\s\0-\x1f]/.test(value)) {
      throw new PlanError(
        `${name} is ${JSON.stringify(value)}, which is not a path.`,
        `A health check path starts with "/" and has no spaces, e.g. /health. Fix it with \`slipway env set ${name} /health\`.`,
      );
    }
    if (!paths.includes(value)) paths.push(value);
  }
  return paths;
}
