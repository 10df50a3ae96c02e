import { connect } from 'node:net';

/** A reply as Redis sends it: simple strings and bulk strings as text, errors as RespError. */
export type RespReply = string | number | null | RespError | RespReply[];

export class RespError {
  constructor(readonly message: string) {}
}

export function encodeCommand(args: string[]): Buffer {
  const parts = [`*${args.length}\r\n`];
  for (const arg of args) parts.push(`$${Buffer.byteLength(arg)}\r\n${arg}\r\n`);
  return Buffer.from(parts.join(''));
}

/** Parses one reply at `offset`; undefined when the buffer does not hold a whole reply yet. */
export function parseReply(buffer: Buffer, offset = 0): { reply: RespReply; next: number } | undefined {
  const lineEnd = buffer.indexOf('\r\n', offset);
  if (lineEnd < 0) return undefined;
  const type = String.fromCharCode(buffer[offset]!);
  const line = buffer.toString('utf8', offset + 1, lineEnd);
  const after = lineEnd + 2;
  switch (type) {
    case '+':
      return { reply: line, next: after };
    case '-':
      return { reply: new RespError(line), next: after };
    case ':':
      return { reply: Number(line), next: after };
    case '$': {
      const length = Number(line);
      if (length < 0) return { reply: null, next: after };
      if (buffer.length < after + length + 2) return undefined;
      return { reply: buffer.toString('utf8', after, after + length), next: after + length + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { reply: null, next: after };
      const items: RespReply[] = [];
      let next = after;
      for (let i = 0; i < count; i++) {
        const item = parseReply(buffer, next);
        if (!item) return undefined;
        items.push(item.reply);
        next = item.next;
      }
      return { reply: items, next };
    }
    default:
      throw new Error(`Unexpected RESP reply type "${type}" from Redis.`);
  }
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
          if (!parsed) break;
          replies.push(parsed.reply);
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
