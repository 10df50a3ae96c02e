import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import type { AccessRecord } from '../../src/router/router.js';
import type { ValidatedRoute } from '../../src/router/validate.js';

/**
 * nginx's access log (`log_format slipway` in config.ts) turned into the router's request
 * records: `$remote_addr [$time_iso8601] "$host" "$request" $status $body_bytes_sent
 * $request_time $upstream_addr $upstream_response_time $request_id`. nginx escapes `"` and
 * control characters inside the quoted fields, so the fields split cleanly.
 */
const LINE = /^(\S+) \[([^\]]+)\] "((?:[^"\\]|\\.)*)" "((?:[^"\\]|\\.)*)" (\d{3}) (\d+) ([\d.]+) (.*) (\S+)$/;

/** The app a request's Host went to: an exact name first, then the longest wildcard that covers it. */
export function appOfHost(routes: readonly ValidatedRoute[], host: string): string | undefined {
  const name = host.toLowerCase().replace(/:\d+$/, '');
  let best: ValidatedRoute | undefined;
  for (const route of routes) {
    if (route.host === name) return route.appId;
    if (route.host.startsWith('*.') && name.endsWith(route.host.slice(1)) && (!best || route.host.length > best.host.length)) best = route;
  }
  return best?.appId;
}

/** A record for a request nginx forwarded to an app; undefined for its own pages (404, 503, redirects) and lines it cannot read. */
export function parseNginxAccessLine(line: string, appOf: (host: string) => string | undefined): AccessRecord | undefined {
  const m = LINE.exec(line);
  if (!m) return undefined;
  const [, client, time, host, request, status, bytes, seconds, upstreams] = m as unknown as string[];
  // No address: nginx answered itself; several: it retried, and the last one answered.
  const instance = upstreams!.match(/\d{1,3}(?:\.\d{1,3}){3}:\d+/g)?.at(-1);
  if (!instance) return undefined;
  const appId = appOf(host!);
  if (!appId) return undefined;
  const space = request!.indexOf(' ');
  const method = space > 0 ? request!.slice(0, space) : request!;
  const path = space > 0 ? request!.slice(space + 1).replace(/ HTTP\/[\d.]+$/, '') : '';
  const at = Date.parse(time!);
  return {
    time: Number.isNaN(at) ? new Date() : new Date(at),
    appId,
    host: host!,
    client: client!,
    method,
    path,
    status: Number(status),
    bytes: Number(bytes),
    durationMs: Number(seconds) * 1000,
    instance,
    tls: false,
  };
}

const POLL_MS = 250;
const MAX_READ = 1024 * 1024;

/**
 * Follows the access log from its end as nginx appends to it (nginx flushes its buffer every
 * second), handing each whole line on. A file that shrank or was replaced is read from its start.
 */
export class AccessLogTail {
  private offset = 0;
  private inode = 0;
  private partial = '';
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly path: string,
    private readonly onLine: (line: string) => void,
  ) {}

  start(): void {
    try {
      const stat = statSync(this.path);
      this.offset = stat.size;
      this.inode = stat.ino;
    } catch {
      this.offset = 0;
    }
    this.timer = setInterval(() => this.poll(), POLL_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.poll();
  }

  private poll(): void {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch {
      return;
    }
    try {
      const stat = fstatSync(fd);
      if (stat.ino !== this.inode || stat.size < this.offset) {
        this.inode = stat.ino;
        this.offset = 0;
        this.partial = '';
      }
      while (this.offset < stat.size) {
        const buffer = Buffer.alloc(Math.min(MAX_READ, stat.size - this.offset));
        const read = readSync(fd, buffer, 0, buffer.length, this.offset);
        if (read <= 0) break;
        this.offset += read;
        const lines = (this.partial + buffer.toString('utf8', 0, read)).split('\n');
        this.partial = lines.pop() ?? '';
        for (const line of lines) if (line) this.onLine(line);
      }
    } finally {
      closeSync(fd);
    }
  }
}
