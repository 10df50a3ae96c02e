/**
 * The wire format of `slipway run` after the HTTP upgrade: the client sends its standard input
 * as raw bytes (and half-closes for end of input); the daemon answers with frames of one type
 * byte, a 4-byte big-endian length and the payload: the command's output as it comes, then its
 * exit status (JSON) as the last frame. Shared by the API and the CLI.
 */

/**
 * `ping` frames carry nothing: the daemon sends one every second so that a client which went
 * away (its end of the connection gone) is noticed even while the command prints nothing.
 */
export const FRAME = { stdout: 1, stderr: 2, exit: 3, error: 4, ping: 5 } as const;
export type FrameType = (typeof FRAME)[keyof typeof FRAME];

export interface RunExit {
  code: number | null;
  signal: string | null;
  outOfMemory?: boolean;
}

export function encodeFrame(type: FrameType, payload: Buffer | string): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  const header = Buffer.alloc(5);
  header.writeUInt8(type, 0);
  header.writeUInt32BE(body.length, 1);
  return Buffer.concat([header, body]);
}

/** Cuts a byte stream into frames, whatever the chunk boundaries. */
export class FrameDecoder {
  private pending: Buffer = Buffer.alloc(0);

  constructor(private readonly onFrame: (type: FrameType, payload: Buffer) => void) {}

  push(chunk: Buffer): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    while (this.pending.length >= 5) {
      const length = this.pending.readUInt32BE(1);
      if (this.pending.length < 5 + length) return;
      const type = this.pending.readUInt8(0) as FrameType;
      const payload = this.pending.subarray(5, 5 + length);
      this.pending = this.pending.subarray(5 + length);
      this.onFrame(type, payload);
    }
  }
}
