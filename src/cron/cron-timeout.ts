import { ValidationError } from '../core/errors.js';

/**
 * How long one run of a cron job may take before it is killed (docs/behaviour.md, Cron jobs):
 * SLIPWAY_CRON_TIMEOUT seconds, an hour unless the app sets it. Read at each run, so a change
 * needs no deployment.
 */
export const CRON_TIMEOUT_VARIABLE = 'SLIPWAY_CRON_TIMEOUT';
export const DEFAULT_CRON_TIMEOUT_S = 3600;
const MIN_S = 1;
const MAX_S = 86_400;

/** The time limit in ms, with what is wrong with the variable when it is set badly (the default applies then). */
export function cronTimeoutMs(appVars: Record<string, string>): { ms: number; problem?: string } {
  const text = appVars[CRON_TIMEOUT_VARIABLE]?.trim();
  if (text === undefined || text === '') return { ms: DEFAULT_CRON_TIMEOUT_S * 1000 };
  const n = Number(text);
  if (/^\d+$/.test(text) && n >= MIN_S && n <= MAX_S) return { ms: n * 1000 };
  return {
    ms: DEFAULT_CRON_TIMEOUT_S * 1000,
    problem: `${CRON_TIMEOUT_VARIABLE} is not a whole number of seconds from ${MIN_S} to ${MAX_S}: the default ${DEFAULT_CRON_TIMEOUT_S} s applies (fix it with slipway env set ${CRON_TIMEOUT_VARIABLE} 600).`,
  };
}

/** Refuses a malformed SLIPWAY_CRON_TIMEOUT at `slipway env set`, before a run falls back to the default. */
export function checkCronTimeoutVariable(name: string, value: string): void {
  if (name !== CRON_TIMEOUT_VARIABLE) return;
  const { problem } = cronTimeoutMs({ [name]: value });
  if (problem)
    throw new ValidationError(
      `${CRON_TIMEOUT_VARIABLE} is a whole number of seconds from ${MIN_S} to ${MAX_S}, not ${JSON.stringify(value)}; nothing was changed.`,
      `For example: slipway env set ${CRON_TIMEOUT_VARIABLE} 600`,
    );
}
