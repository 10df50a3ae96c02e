import { connect } from 'node:net';

/**
 * The Redis protocol (RESP2), read and written in one place: the add-on's probes and tests
 * (`respExchange`, replies as text) and the backups' long-lived connection
 * (`backups/redis/resp-connection.ts`, replies as bytes) share this parser and encoder.
 */

/**
 * A reply as Redis sends it, binary-safe: bulk strings stay bytes (DUMP payloads and key names
 * are any bytes), simple strings are text, errors are RespError.
 */
export type BinaryReply = Buffer | string | number | null | RespError | BinaryReply[];

/** A reply with its bulk strings read as UTF-8 text. */
export type RespReply = string | number | null | RespError | RespReply[];

export class RespError {
  constructor(readonly message: string) {}
}

/** One command's words: text, or bytes as Redis gave them (a key name, a DUMP payload). */
export type Command = ReadonlyArray<string | Buffer>;

const CRLF = Buffer.from('\r\n');

export function encodeCommand(command: Command): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${command.length}\r\n`)];
  for (const word of command) {
    const bytes = typeof word === 'string' ? Buffer.from(word) : word;
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, CRLF);
  }
  return Buffer.concat(parts);
}

/** Parses one reply at `offset`: the reply, or how many bytes the buffer must hold before it can be whole. */
export function parseReply(buffer: Buffer, offset = 0): { reply: BinaryReply; next: number } | { need: number } {
  const lineEnd = buffer.indexOf('\r\n', offset);
  if (lineEnd < 0) return { need: buffer.length + 1 };
  const type = String.fromCharCode(buffer[offset]!);
  const line = buffer.toString('latin1', offset + 1, lineEnd);
  const after = lineEnd + 2;
  switch (type) {
    case '+':
      return { reply: line, next: after };
    case '-':
      return { reply: new RespError(buffer.toString('utf8', offset + 1, lineEnd)), next: after };
    case ':':
      return { reply: Number(line), next: after };
    case '$': {
      const length = Number(line);
      if (length < 0) return { reply: null, next: after };
      if (buffer.length < after + length + 2) return { need: after + length + 2 };
      return { reply: buffer.subarray(after, after + length), next: after + length + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { reply: null, next: after };
      const items: BinaryReply[] = [];
      let next = after;
      for (let i = 0; i < count; i++) {
        const item = parseReply(buffer, next);
        if ('need' in item) return item;
        items.push(item.reply);
        next = item.next;
      }
      return { reply: items, next };
    }
    default:
      throw new Error(`Unexpected RESP reply type "${type}" from Redis.`);
  }
}

/** The reply with its bulk strings as UTF-8 text, for callers that only read text. */
export function asText(reply: BinaryReply): RespReply {
  if (Buffer.isBuffer(reply)) return reply.toString('utf8');
  if (Array.isArray(reply)) return reply.map(asText);
  return reply;
}

/**
 * Sends the commands on one connection and returns one reply per command. Enough for health
 * probes and tests without a client library.
 */
export function respExchange(host: string, port: number, commands: string[][], timeoutMs = 5000): Promise<RespReply[]> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    let buffer = Buffer.alloc(0);
    const replies: RespReply[] = [];
    const fail = (err: Error) => {
      socket.destroy();
      reject(err);
    };
    socket.setTimeout(timeoutMs, () => fail(new Error(`Redis at ${host}:${port} did not answer within ${timeoutMs} ms.`)));
    socket.once('error', fail);
    socket.once('connect', () => socket.write(Buffer.concat(commands.map(encodeCommand))));
    socket.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      try {
        for (;;) {
          const parsed = parseReply(buffer);
          if ('need' in parsed) break;
          replies.push(asText(parsed.reply));
          buffer = buffer.subarray(parsed.next);
          if (replies.length === commands.length) {
            socket.end();
            resolve(replies);
            return;
          }
        }
      } catch (err) {
        fail(err as Error);
      }
    });
    socket.once('close', () => {
      if (replies.length < commands.length) {
        reject(new Error(`Redis at ${host}:${port} closed the connection after ${replies.length} of ${commands.length} replies.`));
      }
    });
  });
}
