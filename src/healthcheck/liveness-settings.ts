import { PlanError, ValidationError } from '../core/errors.js';

/**
 * docs/behaviour.md, Liveness: how a running instance's health-check paths are checked after
 * the deployment, read like the other health-check settings from the app's variables.
 */
export interface LivenessSettings {
  /** False with SLIPWAY_LIVENESS=off: the instance is never checked once it serves. */
  enabled: boolean;
  /** Time from the start of one check to the start of the next. */
  intervalMs: number;
  /** How long each path may take to answer, per check. */
  timeoutMs: number;
  /** Failed checks in a row before the instance is taken out of the router and replaced. */
  failures: number;
}

/**
 * With these an instance that stops answering is out of the router within about 18 s
 * (3 checks 5 s apart, the last given 3 s): an app with one instance is back within 30 s when
 * it boots in 10 s.
 */
export const LIVENESS_DEFAULTS: Readonly<LivenessSettings> = { enabled: true, intervalMs: 5000, timeoutMs: 3000, failures: 3 };

interface NumberRule {
  what: string;
  min: number;
  max: number;
  integer: boolean;
  example: string;
}

const RULES: Record<string, NumberRule> = {
  SLIPWAY_LIVENESS_INTERVAL: { what: 'a number of seconds', min: 0.5, max: 3600, integer: false, example: '5' },
  SLIPWAY_LIVENESS_TIMEOUT: { what: 'a number of seconds', min: 0.1, max: 300, integer: false, example: '3' },
  SLIPWAY_LIVENESS_FAILURES: { what: 'a whole number of checks', min: 1, max: 100, integer: true, example: '3' },
};

const SWITCH = 'SLIPWAY_LIVENESS';
const SWITCH_VALUES = ['on', 'off'];

export function isLivenessVariable(name: string): boolean {
  return name === SWITCH || name in RULES;
}

/** Why `value` is refused for `name`, or undefined when it is fine (or not a liveness variable). */
function problem(name: string, value: string): { message: string; example: string } | undefined {
  const text = value.trim();
  if (name === SWITCH) {
    if (SWITCH_VALUES.includes(text.toLowerCase())) return undefined;
    return { message: `${SWITCH} is on or off, not ${JSON.stringify(value)}`, example: 'off' };
  }
  const rule = RULES[name];
  if (!rule) return undefined;
  const n = Number(text);
  const shape = rule.integer ? /^\d+$/ : /^\d+(\.\d+)?$/;
  if (shape.test(text) && n >= rule.min && n <= rule.max) return undefined;
  return { message: `${name} is ${rule.what} from ${rule.min} to ${rule.max}, not ${JSON.stringify(value)}`, example: rule.example };
}

/** Refuses a malformed liveness variable at `slipway env set`, before any deployment reads it. */
export function checkLivenessVariable(name: string, value: string): void {
  const found = problem(name, value);
  if (!found) return;
  throw new ValidationError(`${found.message}; nothing was changed.`, `For example: slipway env set ${name} ${found.example}`);
}

/**
 * The liveness settings of an instance from its variables, the defaults for those unset.
 * Throws a PlanError naming the variable when one is malformed (the deployment fails on it).
 */
export function livenessSettings(env: Record<string, string | undefined>): LivenessSettings {
  for (const name of [SWITCH, ...Object.keys(RULES)]) {
    const value = env[name];
    if (value === undefined || value.trim() === '') continue;
    const found = problem(name, value);
    if (found) throw new PlanError(`${found.message}.`, `Fix it with \`slipway env set ${name} ${found.example}\`.`);
  }
  const seconds = (name: string, fallback: number) => {
    const value = env[name]?.trim();
    return value ? Math.round(Number(value) * 1000) : fallback;
  };
  return {
    enabled: (env[SWITCH]?.trim().toLowerCase() || 'on') === 'on',
    intervalMs: seconds('SLIPWAY_LIVENESS_INTERVAL', LIVENESS_DEFAULTS.intervalMs),
    timeoutMs: seconds('SLIPWAY_LIVENESS_TIMEOUT', LIVENESS_DEFAULTS.timeoutMs),
    failures: env.SLIPWAY_LIVENESS_FAILURES?.trim() ? Number(env.SLIPWAY_LIVENESS_FAILURES.trim()) : LIVENESS_DEFAULTS.failures,
  };
}
