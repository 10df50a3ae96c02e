/** How much one log keeps: the file being written plus `rotatedFiles` older ones, each at most `maxFileBytes`. */
export interface RotationLimits {
  maxFileBytes: number;
  rotatedFiles: number;
}

export interface LogLimits {
  /** An application's own output (one log per app). */
  app: RotationLimits;
  /** Each deployment's log. */
  deployment: RotationLimits;
  /** Logs of the newest deployments of each app that are kept; older ones are removed. */
  deploymentLogsPerApp: number;
}

const MiB = 1024 * 1024;

/**
 * At most 40 MiB of output per app (10 MiB written + 3 rotated files) and 4 MiB per deployment
 * log, for the 20 newest deployments: a flood fills the disk of no one, and a day of ordinary
 * output or a failed build's whole story still fits.
 */
export const DEFAULT_LOG_LIMITS: LogLimits = {
  app: { maxFileBytes: 10 * MiB, rotatedFiles: 3 },
  deployment: { maxFileBytes: 2 * MiB, rotatedFiles: 1 },
  deploymentLogsPerApp: 20,
};

/** The smallest file size allowed: one stored line (64 Ki characters, JSON-escaped) must fit. */
export const MIN_LOG_FILE_BYTES = 1 * MiB;

/** What a log of these limits holds on disk at most. */
export function logCapBytes(limits: RotationLimits): number {
  return limits.maxFileBytes * (limits.rotatedFiles + 1);
}

const UNITS: Record<string, number> = { '': 1, k: 1024, m: MiB, g: 1024 * MiB };

/** `10M`, `512K`, `1G` or a number of bytes. */
export function parseSize(flag: string, value: string): number {
  const match = /^(\d+)\s*([kmg]?)(?:i?b)?$/i.exec(value.trim());
  const bytes = match ? Number(match[1]) * UNITS[match[2]!.toLowerCase()]! : NaN;
  if (!Number.isSafeInteger(bytes) || bytes < MIN_LOG_FILE_BYTES || bytes > 64 * 1024 * MiB) {
    throw new Error(
      `${flag} must be a size from 1M to 64G such as 10M or 512M (bytes, or K, M, G for KiB, MiB, GiB), not ${JSON.stringify(value)}.`,
    );
  }
  return bytes;
}

function parseCount(flag: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < min || n > max) {
    throw new Error(`${flag} must be a whole number from ${min} to ${max}, not ${JSON.stringify(value)}.`);
  }
  return n;
}

/** The daemon's flags for logs, each with the environment variable read when the flag is absent. */
export const LOG_LIMIT_FLAGS = {
  'log-max-size': 'SLIPWAY_LOG_MAX_SIZE',
  'log-files': 'SLIPWAY_LOG_FILES',
  'deploy-log-max-size': 'SLIPWAY_DEPLOY_LOG_MAX_SIZE',
  'deploy-log-files': 'SLIPWAY_DEPLOY_LOG_FILES',
  'deploy-logs-kept': 'SLIPWAY_DEPLOY_LOGS_KEPT',
} as const;

export type LogLimitFlag = keyof typeof LOG_LIMIT_FLAGS;

/** Limits from the flags given (else their environment variables, else the defaults). */
export function parseLogLimits(flags: Partial<Record<LogLimitFlag, string>>, env: NodeJS.ProcessEnv): LogLimits {
  const value = (flag: LogLimitFlag) => flags[flag] ?? env[LOG_LIMIT_FLAGS[flag]];
  const size = (flag: LogLimitFlag, fallback: number) => {
    const v = value(flag);
    return v === undefined ? fallback : parseSize(`--${flag}`, v);
  };
  const count = (flag: LogLimitFlag, fallback: number, min: number, max: number) => {
    const v = value(flag);
    return v === undefined ? fallback : parseCount(`--${flag}`, v, min, max);
  };
  const d = DEFAULT_LOG_LIMITS;
  return {
    app: { maxFileBytes: size('log-max-size', d.app.maxFileBytes), rotatedFiles: count('log-files', d.app.rotatedFiles, 0, 50) },
    deployment: {
      maxFileBytes: size('deploy-log-max-size', d.deployment.maxFileBytes),
      rotatedFiles: count('deploy-log-files', d.deployment.rotatedFiles, 0, 50),
    },
    deploymentLogsPerApp: count('deploy-logs-kept', d.deploymentLogsPerApp, 1, 1000),
  };
}
