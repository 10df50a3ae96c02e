import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One ref a push moved, as git's post-receive hook reports it. null = the ref did not exist. */
export interface RefUpdate {
  ref: string;
  before: string | null;
  after: string | null;
}

export type PushReportHandler = (updates: RefUpdate[], say: (line: string) => void) => Promise<void>;

/** Parses post-receive's stdin: one `<old> <new> <ref>` line per updated ref. */
export function parseRefUpdates(text: string): RefUpdate[] {
  const updates: RefUpdate[] = [];
  for (const line of text.split('\n')) {
    const match = /^([0-9a-f]{40,64}) ([0-9a-f]{40,64}) (\S+)$/.exec(line.trim());
    if (!match) continue;
    const [, before, after, ref] = match as unknown as [string, string, string, string];
    updates.push({ ref, before: isZero(before) ? null : before, after: isZero(after) ? null : after });
  }
  return updates;
}

function isZero(id: string): boolean {
  return /^0+$/.test(id);
}

/**
 * A private Unix socket for one push. The repository's post-receive hook connects to it, sends
 * the ref updates and prints whatever comes back, so the handler's lines reach the pusher as
 * `remote:` lines while git is still talking to them. The socket lives in a fresh 0700 folder,
 * so nothing else on the machine can pose as the hook.
 */
export class PushReportListener {
  private handling: Promise<void> | null = null;
  private invoked = false;
  private failure: Error | null = null;

  private constructor(
    readonly socketPath: string,
    private readonly folder: string,
    private readonly server: Server,
  ) {}

  static async open(handler: PushReportHandler): Promise<PushReportListener> {
    const folder = await mkdtemp(join(tmpdir(), 'slipway-push-'));
    const socketPath = join(folder, 'hook.sock');
    let listener: PushReportListener | null = null;
    // allowHalfOpen: the hook ends its side after sending the updates and still reads our answer.
    const server = createServer({ allowHalfOpen: true }, (socket) => listener?.accept(socket, handler));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => resolve());
    });
    listener = new PushReportListener(socketPath, folder, server);
    return listener;
  }

  /** True once the hook reported this push and the handler ran (or is running). */
  get reported(): boolean {
    return this.invoked;
  }

  /** Waits for the handler (if the hook reported) and returns the error it threw, if any. */
  async settled(): Promise<Error | null> {
    await this.handling;
    return this.failure;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await rm(this.folder, { recursive: true, force: true });
  }

  private accept(socket: Socket, handler: PushReportHandler): void {
    if (this.handling) {
      socket.destroy(); // One report per push.
      return;
    }
    const chunks: Buffer[] = [];
    let resolveHandling!: () => void;
    this.handling = new Promise((resolve) => (resolveHandling = resolve));
    socket.on('error', () => {}); // The pusher may hang up; the deployment is queued anyway.
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => {
      this.invoked = true;
      const say = (line: string) => {
        if (!socket.writable) return;
        for (const part of line.split(/\r?\n/)) socket.write(`${part}\n`);
      };
      handler(parseRefUpdates(Buffer.concat(chunks).toString('utf8')), say)
        .catch((error: unknown) => {
          this.failure = error instanceof Error ? error : new Error(String(error));
        })
        .finally(() => {
          socket.end();
          resolveHandling();
        });
    });
    socket.on('close', () => {
      // Hook died before sending its updates: nothing will be handled on this socket.
      if (!this.invoked) resolveHandling();
    });
  }
}
