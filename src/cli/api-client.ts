import { request as httpRequest } from 'node:http';
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

  async raw(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
    try {
      return await fetch(`${this.config.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.config.token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      throw new CliError(
        `Cannot reach the slipway daemon at ${this.config.url}: ${(error as { cause?: Error }).cause?.message ?? (error as Error).message}.`,
        'Start it with `slipway server` (or check SLIPWAY_URL / `slipway login`).',
      );
    }
  }
}
