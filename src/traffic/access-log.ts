import type { LogEntry, LogHub } from '../logs/log-hub.js';
import type { RotationLimits } from '../logs/log-limits.js';
import type { AccessRecord } from '../router/router.js';

/** What one stored access-log line holds: a summary in `line`, and each field on its own. */
export interface AccessEntry extends LogEntry {
  stream: 'access';
  host: string;
  client: string;
  method: string;
  path: string;
  status: number;
  bytes: number;
  duration_ms: number;
  instance: string;
  tls: boolean;
}

/**
 * 8 MiB written + 1 rotated file per app: about 60,000 requests of ordinary length, so the
 * last hours of a busy app and days of a quiet one, and never more than 16 MiB of disk.
 */
export const ACCESS_LOG_LIMITS: RotationLimits = { maxFileBytes: 8 * 1024 * 1024, rotatedFiles: 1 };

/** Long request targets (query strings of megabytes) are cut: the log keeps their start. */
export const MAX_LOGGED_PATH = 2048;
const MAX_LOGGED_METHOD = 32;

/** Only the ids the platform gives apps name a log file. */
const APP_ID = /^app_[0-9a-f-]{36}$/;

export function accessEntry(record: AccessRecord): AccessEntry {
  const path = cut(record.path, MAX_LOGGED_PATH);
  const method = cut(record.method, MAX_LOGGED_METHOD);
  const durationMs = Math.round(record.durationMs * 10) / 10;
  const instance = record.instance || '-';
  return {
    time: record.time.toISOString(),
    stream: 'access',
    line: `${record.client} ${method} ${path} ${record.status} ${record.bytes} B ${durationMs} ms ${instance}`,
    host: record.host,
    client: record.client,
    method,
    path,
    status: record.status,
    bytes: record.bytes,
    duration_ms: durationMs,
    instance,
    tls: record.tls,
  };
}

/**
 * Each app's access log: one NDJSON log per app in a LogHub of its own (its own folder and
 * limits), so it is bounded, rotated, read from its end and followed exactly like the app's
 * output, and a flood of requests drops counted lines rather than holding the daemon's memory.
 */
export class AccessLog {
  constructor(readonly hub: LogHub) {}

  record(record: AccessRecord): void {
    if (!APP_ID.test(record.appId)) return;
    this.hub.appendEntry(record.appId, accessEntry(record));
  }

  /** A deleted app's access log goes with it. */
  remove(appId: string): Promise<void> {
    return this.hub.remove([appId]);
  }
}

function cut(text: string, max: number): string {
  return text.length > max ? text.slice(0, max) : text;
}
