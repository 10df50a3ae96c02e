import { PlanError } from '../core/errors.js';
import { ValidationError } from '../core/errors.js';
import { checkLivenessVariable } from './liveness-settings.js';

const NUMBERED = /^CC_HEALTH_CHECK_PATH_(\d+)$/;

/** The rule a health check path follows, said the same way wherever a value is refused. */
const PATH_RULE = 'A health check path starts with "/" and has no spaces or control characters, e.g. /health.';

export function isHealthCheckVariable(name: string): boolean {
  return name === 'CC_HEALTH_CHECK_PATH' || NUMBERED.test(name);
}

function isHealthCheckPath(value: string): boolean {
  return value.startsWith('/') && !/[\s\0-\x1f\x7f]/.test(value);
}

/**
 * Refuses a health check variable whose value is not a path when it is set (or a malformed
 * liveness setting), so the mistake shows at `slipway env set` rather than after a whole build.
 */
export function checkHealthCheckVariable(name: string, value: string): void {
  checkLivenessVariable(name, value);
  if (!isHealthCheckVariable(name) || isHealthCheckPath(value)) return;
  throw new ValidationError(
    `${name} is ${JSON.stringify(value)}, which is not a path; nothing was changed.`,
    `${PATH_RULE} Set it again with a path, e.g. \`slipway env set ${name} /health\`.`,
  );
}

/**
 * The paths to check: CC_HEALTH_CHECK_PATH and every CC_HEALTH_CHECK_PATH_<n>,
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
    if (!isHealthCheckPath(value)) {
      throw new PlanError(
        `${name} is ${JSON.stringify(value)}, which is not a path.`,
        `${PATH_RULE} Fix it with \`slipway env set ${name} /health\`.`,
      );
    }
    if (!paths.includes(value)) paths.push(value);
  }
  return paths;
}
