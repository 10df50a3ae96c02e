import { connect, type Socket } from 'node:net';
import { type BinaryReply, type Command, encodeCommand, parseReply, RespError } from '../../addons/redis/resp.js';

export type RedisTarget = { path: string } | { host: string; port: number };

interface Waiting {
  count: number;
  replies: BinaryReply[];
  resolve(replies: BinaryReply[]): void;
  reject(error: Error): void;
}

/**
 * A connection to one Redis server that sends commands in batches (pipelined: one write, the
 * replies in order) and keeps going until closed; a reply as large as Redis allows is gathered
 * without copying the whole buffer on every chunk. A connection that goes quiet for `idleMs`
 * while replies are owed, or breaks, fails every batch still waiting.
 */
export class RedisConnection {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private need = 1;
  private readonly waiting: Waiting[] = [];
  private failure: Error | undefined;

  private constructor(
    private readonly socket: Socket,
    private readonly what: string,
  ) {
    socket.on('data', (chunk: Buffer) => this.received(chunk));
    socket.on('error', (error) => this.fail(new Error(`${what}: ${error.message}`)));
    socket.on('close', () => this.fail(new Error(`${what} closed the connection.`)));
    socket.on('timeout', () => {
      if (this.waiting.length > 0) {
        this.fail(new Error(`${what} did not answer for ${Math.round((socket.timeout ?? 0) / 1000)} s.`));
        socket.destroy();
      }
    });
  }

  static open(target: RedisTarget, o: { idleMs?: number; connectMs?: number } = {}): Promise<RedisConnection> {
    const what = 'path' in target ? `Redis at ${target.path}` : `Redis at ${target.host}:${target.port}`;
    return new Promise((resolve, reject) => {
      const socket = 'path' in target ? connect({ path: target.path }) : connect({ host: target.host, port: target.port });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`${what} did not accept the connection within ${o.connectMs ?? 5000} ms.`));
      }, o.connectMs ?? 5000);
      socket.once('error', (error) => {
        clearTimeout(timer);
        reject(new Error(`${what}: ${error.message}`));
      });
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.removeAllListeners('error');
        socket.setTimeout(o.idleMs ?? 60_000);
        resolve(new RedisConnection(socket, what));
      });
    });
  }

  /** Sends the commands in one write; resolves with one reply per command (errors as RespError). */
  send(commands: Command[]): Promise<BinaryReply[]> {
    if (this.failure) return Promise.reject(this.failure);
    if (commands.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      this.waiting.push({ count: commands.length, replies: [], resolve, reject });
      this.socket.write(Buffer.concat(commands.map(encodeCommand)));
    });
  }

  /** Sends one command; a Redis error rejects, naming the command. */
  async call(...command: Command): Promise<BinaryReply> {
    const [reply] = await this.send([command]);
    if (reply instanceof RespError) throw new Error(`${this.what} refused ${String(command[0])}: ${reply.message}`);
    return reply ?? null;
  }

  close(): void {
    this.failure ??= new Error(`The connection to ${this.what} was closed.`);
    this.socket.destroy();
  }

  private received(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    if (this.buffered < this.need) return;
    let buffer = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.buffered);
    try {
      for (;;) {
        if (buffer.length === 0) {
          this.need = 1;
          break;
        }
        const parsed = parseReply(buffer);
        if ('need' in parsed) {
          this.need = parsed.need;
          break;
        }
        buffer = buffer.subarray(parsed.next);
        this.deliver(parsed.reply);
      }
    } catch (error) {
      this.fail(error as Error);
      this.socket.destroy();
      return;
    }
    this.chunks = buffer.length > 0 ? [buffer] : [];
    this.buffered = buffer.length;
  }

  private deliver(reply: BinaryReply): void {
    const batch = this.waiting[0];
    if (!batch) {
      this.fail(new Error(`${this.what} sent a reply nothing asked for.`));
      return;
    }
    batch.replies.push(reply);
    if (batch.replies.length === batch.count) {
      this.waiting.shift();
      batch.resolve(batch.replies);
    }
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const batch of this.waiting.splice(0)) batch.reject(this.failure);
  }
}

/** A bulk or simple string reply as text; anything else is a protocol surprise. */
export function text(reply: BinaryReply, what: string): string {
  if (Buffer.isBuffer(reply)) return reply.toString('utf8');
  if (typeof reply === 'string') return reply;
  if (reply instanceof RespError) throw new Error(`${what}: ${reply.message}`);
  throw new Error(`${what}: Redis answered ${JSON.stringify(reply)} where text was expected.`);
}
