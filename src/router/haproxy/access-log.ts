/**
 * HAProxy writes one raw line per request (ACCESS_LOG_FORMAT in config.ts) into a ring buffer
 * that it forwards over a TCP connection to a loopback port (see config.ts): lines arrive many
 * per read (READ_PAUSE_MS, except while a backlog waits), where a UDP datagram per request cost the daemon about 10 µs of CPU each. This
 * turns each line into an AccessRecord. Lines from backends that are not apps (404 page, ACME)
 * are never sent.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import type { AccessRecord } from '../router.js';

/** Parses one line; `appOf` names the app a backend serves (undefined: not an app, dropped). */
export function parseAccessLine(line: string, appOf: (backend: string) => string | undefined): AccessRecord | undefined {
  const fields = line.trim().split(' ');
  if (fields.length < 11) return undefined;
  const [backend, time, client, method, path, status, bytes, duration, instance, tls] = fields;
  const appId = appOf(backend!);
  if (!appId) return undefined;
  const seconds = Number(time);
  if (!Number.isFinite(seconds)) return undefined;
  return {
    time: new Date(Math.round(seconds * 1000)),
    appId,
    host: fields.slice(10).join(' '),
    client: client!,
    method: method!,
    path: path!,
    status: Number(status),
    bytes: Number(bytes) || 0,
    durationMs: Math.max(0, Number(duration) || 0),
    // HAProxy writes "-:-" or "<NOSRV>" variants when no server answered (503 of an app with nothing running).
    instance: /^\d+\.\d+\.\d+\.\d+:\d+$/.test(instance!) ? instance! : '',
    tls: tls === '1',
  };
}

/** A line longer than this (HAProxy cuts its lines at 8192 bytes) is not HAProxy's: dropped. */
const MAX_LINE_BYTES = 16 * 1024;

/**
 * After each read the connection rests this long, so the lines of the next 25 ms wait in the
 * kernel and arrive in one read: under load that halves the daemon's CPU per line (about 4 µs
 * to 2, parsing included). At 40,000 requests a second that is 100 KB, well within the socket's
 * buffer and HAProxy's 4 MiB ring; records are for figures, a few ms late is nothing.
 */
export const READ_PAUSE_MS = 25;

/**
 * What one read takes from the kernel at most (libuv reads into 64 KiB). A read that comes back
 * this full means more lines are waiting: resting then would cap the receiver at 64 KiB per
 * 25 ms (about 30,000 lines a second), below what HAProxy serves on a quiet machine, and the
 * ring would overwrite lines before they are read.
 */
export const FULL_READ_BYTES = 64 * 1024;

/** How long to rest after a read of `bytes`: none while a backlog waits, READ_PAUSE_MS otherwise. */
export function restAfterRead(bytes: number): number {
  return bytes >= FULL_READ_BYTES ? 0 : READ_PAUSE_MS;
}

export class AccessLogReceiver {
  private server: Server | undefined;
  private readonly connections = new Set<Socket>();

  constructor(
    private readonly appOf: (backend: string) => string | undefined,
    private readonly onRecord: (record: AccessRecord) => void,
  ) {}

  /** Listens on a free loopback port and returns it. */
  async start(): Promise<number> {
    // A high-water mark of one byte: a paused connection stops reading from the kernel at once.
    const server = createServer({ highWaterMark: 1 }, (socket) => this.receive(socket));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (!address || typeof address === 'string') throw new Error('The access log receiver has no TCP port.');
    return address.port;
  }

  stop(): void {
    this.server?.close();
    this.server = undefined;
    for (const socket of this.connections) socket.destroy();
    this.connections.clear();
  }

  private receive(socket: Socket): void {
    this.connections.add(socket);
    let carry = '';
    const decoder = new StringDecoder('utf8');
    socket.on('data', (chunk: Buffer) => {
      const rest = restAfterRead(chunk.length);
      if (rest > 0) {
        socket.pause();
        setTimeout(() => socket.resume(), rest).unref();
      }
      const lines = (carry + decoder.write(chunk)).split('\n');
      carry = lines.pop() ?? '';
      if (carry.length > MAX_LINE_BYTES) carry = '';
      for (const line of lines) {
        if (!line) continue;
        const record = parseAccessLine(line, this.appOf);
        if (record) this.onRecord(record);
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => this.connections.delete(socket));
  }
}
