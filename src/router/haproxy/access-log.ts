/**
 * HAProxy writes one raw line per request (ACCESS_LOG_FORMAT in config.ts) on its fd 3, a FIFO
 * its supervisor holds and the daemon reads (`log fd@3`): one writev per line, and a line the pipe
 * has no room for is dropped and counted (HAProxy's DroppedLogs, in /metrics), never waited
 * for. The pipe is enlarged (PIPE_BYTES) so that it holds what arrives while the daemon rests
 * between reads (READ_PAUSE_MS): lines arrive many per read, where a UDP datagram per request
 * cost the daemon about 10 µs of CPU each. This turns each line into an AccessRecord. Lines
 * from backends that are not apps (404 page, ACME) are never written.
 */
import { constants, openSync, unlinkSync } from 'node:fs';
import { Socket, type SocketConstructorOpts } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import type { AccessRecord } from '../router.js';
import { spawnProcessGroup } from '../../executor/process-group.js';
import { engineEnv, runEngineTool } from '../engine-process.js';

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
 * to 2, parsing included). At 40,000 requests a second that is 100 KB, well within the pipe
 * (PIPE_BYTES); records are for figures, a few ms late is nothing.
 */
export const READ_PAUSE_MS = 25;

/**
 * What one read takes from the kernel at most (libuv reads into 64 KiB). A read that comes back
 * this full means more lines are waiting: resting then would cap the receiver at 64 KiB per
 * 25 ms (about 30,000 lines a second), below what HAProxy serves on a quiet machine, and the
 * pipe would fill.
 */
export const FULL_READ_BYTES = 64 * 1024;

/** How long to rest after a read of `bytes`: none while a backlog waits, READ_PAUSE_MS otherwise. */
export function restAfterRead(bytes: number): number {
  return bytes >= FULL_READ_BYTES ? 0 : READ_PAUSE_MS;
}

/**
 * The pipe's size: 4 MiB for a daemon that may pass the system's limit (CAP_SYS_RESOURCE: root
 * on most machines, but a container or a VM may withhold it from root, as this machine's does),
 * else that limit (1 MiB by default). A pipe keeps small writes together in pages, so 1 MiB holds
 * about 13,000 lines: a third of a second of the busiest load measured here, many seconds of
 * ordinary traffic. The default 64 KiB would hold 20 ms, less than the receiver's rest.
 */
export const PIPE_BYTES = 4 * 1024 * 1024;

/**
 * F_SETPIPE_SZ (1031), which Node does not offer: perl (part of every Debian system) calls
 * fcntl on the pipe handed to it as fd 3; the size belongs to the pipe, whoever sets it.
 */
const ENLARGE_PIPE = `open(my $pipe, ">&=3") or die; fcntl($pipe, 1031, ${PIPE_BYTES}) or fcntl($pipe, 1031, 1048576) or die`;

/** Sizes the pipe `fd` belongs to (PIPE_BYTES, else the system's limit); false when it could not. */
export async function enlargePipe(fd: number): Promise<boolean> {
  try {
    const perl = await spawnProcessGroup({ argv: ['perl', '-e', ENLARGE_PIPE], cwd: '/', env: engineEnv(), fd3: fd });
    return (await perl.done).exitCode === 0;
  } catch {
    return false;
  }
}

/**
 * Makes the pipe: a FIFO in the router's own folder (0700, so only root opens it), which stays
 * there for as long as the router runs: the router's supervisor holds it open read-write and
 * hands it to HAProxy as fd 3 (and enlarges it), and each daemon opens it to read.
 */
export async function makeAccessPipe(path: string): Promise<void> {
  try {
    unlinkSync(path);
  } catch {
    // None left from an earlier run.
  }
  const made = await runEngineTool(['mkfifo', '-m', '600', path]);
  if (made.code !== 0) throw new Error(`Could not make the access log pipe with mkfifo: ${made.output.trim()}`);
}

export class AccessLogReceiver {
  private socket: Socket | undefined;

  constructor(
    private readonly appOf: (backend: string) => string | undefined,
    private readonly onRecord: (record: AccessRecord) => void,
  ) {}

  /**
   * Starts reading the pipe (makeAccessPipe). Open it once its supervisor holds it: a FIFO read
   * while nobody holds its write side ends at once. Lines written while no daemon read wait in it.
   */
  open(path: string): void {
    this.stop();
    const readEnd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    // A high-water mark of one byte: a paused stream stops reading from the kernel at once (with
    // the default, a paused stream kept reading a line at a time). Node passes it to the stream;
    // its types for the constructor leave it out.
    const options = { fd: readEnd, readable: true, writable: false, highWaterMark: 1 };
    const socket = new Socket(options as SocketConstructorOpts);
    this.socket = socket;
    this.receive(socket);
  }

  /**
   * Reads what HAProxy wrote before it and its supervisor exited (the pipe ends once every
   * writer has closed it), waiting at most `timeoutMs`, then stops.
   */
  async drain(timeoutMs: number): Promise<void> {
    const socket = this.socket;
    if (socket && !socket.destroyed) {
      const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()).once('end', () => resolve()));
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
      socket.resume();
      await Promise.race([ended, limit]);
      clearTimeout(timer);
    }
    this.stop();
  }

  /** Stops reading; what HAProxy writes next waits in the pipe for the next reader. */
  stop(): void {
    this.socket?.destroy();
    this.socket = undefined;
  }

  private receive(socket: Socket): void {
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
  }
}
