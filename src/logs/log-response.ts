import type { ServerResponse } from 'node:http';
import type { LogEntry, LogHub } from './log-hub.js';
import { readTail, type TailOptions } from './tail-reader.js';
import { closeAll } from './log-files.js';

export interface LogRequest extends TailOptions {
  follow: boolean;
}

/**
 * `?follow=1&lines=<n>&since=<time>` of a log request, as the API's router let them through
 * (a whole number of lines, a time Date.parse reads: src/api/routes/deployments-routes.ts,
 * LOG_QUERY); the time is told back in UTC.
 */
export function logRequest(query: { follow?: string; lines?: number; since?: string }): LogRequest {
  const request: LogRequest = { follow: query.follow === '1' };
  if (query.lines !== undefined) request.lines = query.lines;
  if (query.since !== undefined) request.since = new Date(Date.parse(query.since)).toISOString();
  return request;
}

/** Live lines that may wait for a slow reader; beyond this they are skipped and counted. */
const MAX_BUFFERED_CHARS = 1024 * 1024;

/**
 * Streams a log as newline-delimited JSON: the stored tail the request asks for, then, with
 * `follow` and while `live()` says more may come, new lines as they are appended; the stream
 * ends with a line {"end": true, ...final()}. The stored part is read in chunks and written
 * as the client takes it; live lines wait in a bounded buffer, so a client slower than the
 * log costs skipped lines (with a notice saying how many) rather than the daemon's memory.
 */
export async function streamLog(
  res: ServerResponse,
  logs: LogHub,
  key: string,
  request: LogRequest,
  live: () => boolean,
  final: () => Record<string, unknown>,
): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/x-ndjson; charset=utf-8', 'cache-control': 'no-cache' });
  // A follower asking for no stored line must still see the response begin.
  res.flushHeaders();
  const follower = new Follower(res, () => JSON.stringify({ end: true, ...final() }) + '\n');
  const { snapshot, unsubscribe } = await logs.snapshot(key, () =>
    request.follow && live() ? (entry) => follower.push(entry) : undefined,
  );
  let closed = res.destroyed;
  res.once('close', () => {
    closed = true;
    unsubscribe?.();
  });
  try {
    for await (const chunk of readTail(snapshot, request)) {
      if (closed) break;
      if (!res.write(chunk)) await drainedOrClosed(res);
    }
  } finally {
    closeAll(snapshot.files);
  }
  if (closed) {
    unsubscribe?.();
    return;
  }
  if (unsubscribe) follower.start();
  else follower.end();
}

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Live entries for one reader: buffered until it is ready, written once per turn of the event loop. */
class Follower {
  private buffered: string[] = [];
  private bufferedChars = 0;
  private skipped = 0;
  private started = false;
  private finished = false;
  private waitingForDrain = false;
  private scheduled = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly endLine: () => string,
  ) {}

  push(entry: LogEntry | null): void {
    if (entry === null) {
      this.finished = true;
    } else {
      const text = JSON.stringify(entry) + '\n';
      if (this.bufferedChars + text.length > MAX_BUFFERED_CHARS) {
        this.skipped++;
        return;
      }
      this.noteSkipped();
      this.buffered.push(text);
      this.bufferedChars += text.length;
    }
    this.schedule();
  }

  /** The stored part was sent: live entries may follow. */
  start(): void {
    this.started = true;
    this.schedule();
  }

  end(): void {
    this.finished = true;
    this.start();
  }

  private noteSkipped(): void {
    if (this.skipped === 0) return;
    const line = `slipway skipped ${this.skipped} line${this.skipped === 1 ? '' : 's'} here: this reader took them more slowly than the log was written.`;
    this.skipped = 0;
    const text = JSON.stringify({ time: new Date().toISOString(), stream: 'system', line }) + '\n';
    this.buffered.push(text);
    this.bufferedChars += text.length;
  }

  private schedule(): void {
    if (this.scheduled || !this.started || this.waitingForDrain) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    if (this.res.destroyed || this.res.writableEnded) return;
    this.noteSkipped();
    if (this.buffered.length > 0) {
      const text = this.buffered.join('');
      this.buffered = [];
      this.bufferedChars = 0;
      if (!this.res.write(text)) {
        this.waitingForDrain = true;
        this.res.once('drain', () => {
          this.waitingForDrain = false;
          this.schedule();
        });
        return;
      }
    }
    if (this.finished) this.res.end(this.endLine());
  }
}
