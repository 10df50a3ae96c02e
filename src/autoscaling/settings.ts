import { ValidationError } from '../core/errors.js';

/**
 * How the autoscaler judges an app's load. Each has a default fit for a web app; an app
 * overrides any of them with `slipway scale --autoscaling key=value,…` (stored as the keys it set,
 * so a later change of a default reaches every app that did not set that key).
 */
export interface AutoscalingSettings {
  /** Average CPU of the instances (% of one core) at or above which it scales out. */
  cpuOut: number;
  /** It scales in when the same load spread over one instance fewer stays under this (% of one core). */
  cpuIn: number;
  /** Requests in flight per instance at or above which it scales out; 0: not a signal (long-lived connections would misfire). */
  inflightOut: number;
  /** An instance's memory, % of its limit, at or above which its flavour grows. */
  memOut: number;
  /** The flavour shrinks when the memory would stay under this % of the smaller one's limit. */
  memIn: number;
  /** How long the instances must stay saturated before it scales out. */
  outAfterMs: number;
  /** How long the load must stay low before it scales in (one instance at a time). */
  inAfterMs: number;
  /** After a change, samples of this long are not counted: new instances warm up, drained ones leave. */
  cooldownMs: number;
  /** With a minimum of 0 instances: how long without a request before the app sleeps (its instances stop). */
  idleAfterMs: number;
}

export const DEFAULT_AUTOSCALING: Readonly<AutoscalingSettings> = {
  cpuOut: 80,
  cpuIn: 30,
  inflightOut: 0,
  memOut: 90,
  memIn: 50,
  outAfterMs: 6_000,
  inAfterMs: 60_000,
  cooldownMs: 10_000,
  idleAfterMs: 15 * 60_000,
};

/** The keys people write, in the order they are printed. */
const KEYS: Record<string, keyof AutoscalingSettings> = {
  'cpu-out': 'cpuOut',
  'cpu-in': 'cpuIn',
  'inflight-out': 'inflightOut',
  'mem-out': 'memOut',
  'mem-in': 'memIn',
  'out-after': 'outAfterMs',
  'in-after': 'inAfterMs',
  cooldown: 'cooldownMs',
  'idle-after': 'idleAfterMs',
};

const DURATIONS = new Set<keyof AutoscalingSettings>(['outAfterMs', 'inAfterMs', 'cooldownMs', 'idleAfterMs']);
const MAX_DURATION_MS = 3600_000;
const EXAMPLE = 'For example: slipway scale --autoscaling cpu-out=70,in-after=120s (or --autoscaling default)';

/** "6s", "500ms", "2m" or a bare number of seconds, in milliseconds. */
function parseDuration(key: string, text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text);
  const ms = match ? Number(match[1]) * (match[2] === 'ms' ? 1 : match[2] === 'm' ? 60_000 : 1000) : Number.NaN;
  if (!Number.isFinite(ms) || ms < 1000 || ms > MAX_DURATION_MS) {
    throw new ValidationError(`${key} is a duration from 1s to 60m (e.g. 8s, 2m), not ${JSON.stringify(text.slice(0, 40))}.`, EXAMPLE);
  }
  return Math.round(ms);
}

function parsePercent(key: string, text: string, min: number, max: number): number {
  const value = /^\d+(\.\d+)?%?$/.test(text) ? Number(text.replace('%', '')) : Number.NaN;
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new ValidationError(`${key} is a number from ${min} to ${max}, not ${JSON.stringify(text.slice(0, 40))}.`, EXAMPLE);
  }
  return value;
}

/**
 * Reads `key=value,…` into the overrides it sets, merged over `current` (an app's earlier
 * overrides); `default` alone drops them all. Unknown keys and values out of range are refused.
 */
export function parseAutoscalingOverrides(text: string, current: Partial<AutoscalingSettings> = {}): Partial<AutoscalingSettings> {
  const trimmed = text.trim();
  if (trimmed === 'default') return {};
  if (trimmed === '') throw new ValidationError('The autoscaling settings are empty.', EXAMPLE);
  const overrides: Partial<AutoscalingSettings> = { ...current };
  for (const part of trimmed.split(',')) {
    const [rawKey, rawValue, extra] = part.split('=').map((s) => s.trim());
    const key = KEYS[rawKey ?? ''];
    if (!key || rawValue === undefined || extra !== undefined) {
      throw new ValidationError(
        `${JSON.stringify(part.slice(0, 40))} is not a setting of the autoscaler.`,
        `Settings: ${Object.keys(KEYS).join(', ')}, as key=value separated by commas. ${EXAMPLE}`,
      );
    }
    const isMemory = key === 'memOut' || key === 'memIn';
    overrides[key] = DURATIONS.has(key)
      ? parseDuration(rawKey!, rawValue)
      : parsePercent(rawKey!, rawValue, key === 'inflightOut' ? 0 : 1, isMemory ? 100 : 1000);
  }
  const effective = { ...DEFAULT_AUTOSCALING, ...overrides };
  if (effective.cpuIn >= effective.cpuOut) {
    throw new ValidationError(
      `cpu-in (${effective.cpuIn}) must be under cpu-out (${effective.cpuOut}): the gap between them is what keeps a steady load from scaling out and in again.`,
      EXAMPLE,
    );
  }
  if (effective.memIn >= effective.memOut) {
    throw new ValidationError(
      `mem-in (${effective.memIn}) must be under mem-out (${effective.memOut}): the gap between them is what keeps a steady memory use from changing the flavour up and down again.`,
      EXAMPLE,
    );
  }
  return overrides;
}

/** An app's settings from its stored overrides (JSON, null for none); a value the store cannot hold is the default. */
export function effectiveSettings(json: string | null | undefined): AutoscalingSettings {
  return { ...DEFAULT_AUTOSCALING, ...storedOverrides(json) };
}

/** The overrides stored for an app (JSON object of known numeric keys). */
export function storedOverrides(json: string | null | undefined): Partial<AutoscalingSettings> {
  if (!json) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return {};
  }
  const known = new Set(Object.values(KEYS));
  const out: Partial<AutoscalingSettings> = {};
  if (parsed && typeof parsed === 'object') {
    for (const [key, value] of Object.entries(parsed)) {
      if (known.has(key as keyof AutoscalingSettings) && typeof value === 'number' && Number.isFinite(value)) {
        out[key as keyof AutoscalingSettings] = value;
      }
    }
  }
  return out;
}

/** "cpu-out=80,…,cooldown=10s,idle-after=15m": what `--autoscaling` reads back. */
export function describeSettings(settings: AutoscalingSettings): string {
  return Object.entries(KEYS)
    .map(([name, key]) => `${name}=${DURATIONS.has(key) ? formatDuration(settings[key]) : settings[key]}`)
    .join(',');
}

function formatDuration(ms: number): string {
  return ms % 60_000 === 0 && ms >= 60_000 ? `${ms / 60_000}m` : ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}
