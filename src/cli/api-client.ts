import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import { CliError } from './errors.js';
import type { CliConfig } from './config.js';

/** The CLI talks to the daemon only through its HTTP API. */
export class ApiClient {
  constructor(private readonly config: CliConfig) {}

  get baseUrl(): string {
    return this.config.url;
  }

  async request<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await this.raw(method, path, body);
    const text = await response.text();
    let data: unknown;
    try {
      data = text ? JSON.parse(text) : {};
    } catch {
      throw new CliError(`The daemon answered ${response.status} with something that is not JSON.`, `Is ${this.config.url} a slipway API?`);
    }
    if (!response.ok) {
      const error = (data as { error?: { code?: string; message?: string; hint?: string | null } }).error;
      throw new CliError(error?.message ?? `Request failed with status ${response.status}.`, error?.hint, error?.code);
    }
    return data as T;
  }

  /** Opens an upgraded two-way connection (`slipway run`); a refusal becomes a CliError. */
  upgrade(path: string, protocol: string): Promise<Duplex> {
    const url = new URL(`${this.config.url}${path}`);
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.config.token}`, connection: 'Upgrade', upgrade: protocol },
    });
    return new Promise((resolve, reject) => {
      request.once('upgrade', (_res, socket, head) => {
        if (head.length) socket.unshift(head);
        resolve(socket);
      });
      request.once('response', (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          let error: { message?: string; hint?: string } | undefined;
          try {
            error = (JSON.parse(text) as { error?: { message?: string; hint?: string } }).error;
          } catch {
            // not JSON
          }
          reject(new CliError(error?.message ?? `The daemon refused (status ${res.statusCode}).`, error?.hint));
        });
      });
      request.once('error', (e) =>
        reject(
          new CliError(
            `Cannot reach the slipway daemon at ${this.config.url}: ${e.message}.`,
            'Start it with `slipway server` (or check SLIPWAY_URL / `slipway login`).',
          ),
        ),
      );
      request.end();
    });
  }

  /**
   * One request, its answer's body left to read (a stream of logs, a download). Node's own
   * HTTP client rather than fetch: fetch loads and compiles its HTTP parser at its first call,
   * which costs a command more processor time than all the rest of what it does.
   */
  raw(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<ApiResponse> {
    const url = new URL(`${this.config.url}${path}`);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, {
        method,
        headers: {
          authorization: `Bearer ${this.config.token}`,
          ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      });
      // The abort ends the exchange quietly; Node's own `signal` option would emit the abort as an
      // error on a socket nobody listens to any more once the answer began, ending the command.
      const abort = () => request.destroy();
      signal?.addEventListener('abort', abort, { once: true });
      request.once('close', () => signal?.removeEventListener('abort', abort));
      request.once('response', (res) => resolve(apiResponse(res)));
      // `on`, not `once`: a cut exchange can be told more than once.
      request.on('error', (error) => {
        if (signal?.aborted) return reject(signal.reason);
        reject(
          new CliError(
            `Cannot reach the slipway daemon at ${this.config.url}: ${error.message}.`,
            'Start it with `slipway server` (or check SLIPWAY_URL / `slipway login`).',
          ),
        );
      });
      request.end(payload);
    });
  }
}

/** The daemon's answer: its status, and its body to read whole or as it comes. */
export interface ApiResponse {
  status: number;
  ok: boolean;
  /** The body as it arrives (a log follows, a download). */
  body: IncomingMessage;
  text(): Promise<string>;
}

function apiResponse(res: IncomingMessage): ApiResponse {
  const status = res.statusCode ?? 0;
  // A body cut after its reader stopped (an abort, a download ended early) is no news to anyone;
  // a reader still reading gets the error from its own iteration.
  res.on('error', () => undefined);
  return {
    status,
    ok: status >= 200 && status < 300,
    body: res,
    async text() {
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}
