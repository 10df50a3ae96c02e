/** The slipway API as the console uses it: same origin, bearer token, JSON in and out. */
import type {
  AddonView,
  AppStatusView,
  AppView,
  DeploymentView,
  EnvSectionView,
  EnvVarView,
  InstanceView,
  LogEntry,
  ScaleView,
} from '../../shared/api-types.js';
import { NdjsonReader } from '../../shared/ndjson.js';

// The shapes the API answers, under the names the console's views use.
export type App = AppView;
export type Deployment = DeploymentView;
export type InstanceStatus = InstanceView;
export type AppStatus = AppStatusView;
export type { LogEntry };

export interface Org {
  id: string;
  name: string;
  role?: string;
}

export type Scale = ScaleView;

export type EnvVar = EnvVarView;

export type EnvSection = EnvSectionView;

export interface Provider {
  name: string;
  description: string;
}

export type Addon = AddonView;

export interface Services {
  addons: Addon[];
  apps: Array<{ id: string; name: string }>;
}

/** One minute of an app's requests (`GET /v1/apps/:app/traffic`). */
export interface TrafficMinute {
  minute: string;
  requests: number;
  errors: number;
  p95_ms: number | null;
}

/** An error answered by the API: its message says what happened, its hint what to do. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint: string | null,
  ) {
    super(message);
  }
}

export class Api {
  constructor(
    private readonly token: string,
    private readonly onUnauthorized: () => void,
  ) {}

  private async request(method: string, path: string, body?: unknown): Promise<Response> {
    let response: Response;
    // A read is tried again after a network error: browsers abort requests in flight when the
    // machine's network changes (a new interface, a laptop changing networks). A write is not,
    // since it may have reached the daemon.
    const attempts = method === 'GET' ? 3 : 1;
    for (let attempt = 1; ; attempt++) {
      try {
        response = await fetch(path, {
          method,
          headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
          cache: 'no-store',
        });
        break;
      } catch (error) {
        if (attempt < attempts) {
          await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
          continue;
        }
        throw new ApiError(
          0,
          'network',
          `Could not reach the slipway daemon (${(error as Error).message}).`,
          'Check that the daemon is running, then try again.',
        );
      }
    }
    if (!response.ok) {
      const text = await response.text();
      let parsed: { error?: { code?: string; message?: string; hint?: string | null } } = {};
      try {
        parsed = JSON.parse(text) as typeof parsed;
      } catch {
        /* not JSON: keep the status line */
      }
      const error = new ApiError(
        response.status,
        parsed.error?.code ?? 'http',
        parsed.error?.message ?? `The daemon answered ${response.status} ${response.statusText} to ${method} ${path}.`,
        parsed.error?.hint ?? null,
      );
      if (response.status === 401) this.onUnauthorized();
      throw error;
    }
    return response;
  }

  async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await this.request(method, path, body);
    return (await response.json()) as T;
  }

  get<T>(path: string): Promise<T> {
    return this.json<T>('GET', path);
  }

  /**
   * Reads an NDJSON stream, calling `onEntry` for each line as it arrives; resolves with the
   * closing record. `signal` stops reading when the page moves on.
   */
  async stream(path: string, onEntry: (entry: LogEntry) => void, signal: AbortSignal): Promise<LogEntry> {
    const response = await fetch(path, { headers: { authorization: `Bearer ${this.token}` }, signal, cache: 'no-store' });
    if (!response.ok || !response.body) {
      throw new ApiError(response.status, 'http', `The daemon answered ${response.status} for the log stream.`, null);
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    const records = new NdjsonReader<LogEntry>();
    let last: LogEntry = {};
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      for (const entry of records.push(decoder.decode(value, { stream: true }))) {
        if (entry.end) last = entry;
        else onEntry(entry);
      }
    }
    return last;
  }
}

export const enc = encodeURIComponent;
