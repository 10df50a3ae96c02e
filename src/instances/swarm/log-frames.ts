/**
 * Reads Docker's multiplexed log stream (no TTY): frames of an 8-byte header (stream type:
 * 1 stdout, 2 stderr; then a big-endian payload length) and a payload; payloads are split into
 * lines per stream, a partial line waits for the rest of it.
 */
export class LogFrameReader {
  private buffer: Buffer = Buffer.alloc(0);
  private readonly partial = { out: '', err: '' };

  constructor(
    private readonly onLine: (stream: 'out' | 'err', line: string) => void,
    /** Takes each payload as it comes instead (raw output of a one-off command). */
    private readonly onPayload?: (stream: 'out' | 'err', payload: Buffer) => void,
  ) {}

  push(chunk: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    while (this.buffer.length >= 8) {
      const size = this.buffer.readUInt32BE(4);
      if (this.buffer.length < 8 + size) break;
      const stream = this.buffer[0] === 2 ? 'err' : 'out';
      const payload = this.buffer.subarray(8, 8 + size);
      this.buffer = this.buffer.subarray(8 + size);
      if (this.onPayload) this.onPayload(stream, Buffer.from(payload));
      else this.text(stream, payload.toString('utf8'));
    }
  }

  /** Emits what is left of unterminated lines (the stream ended). */
  end(): void {
    for (const stream of ['out', 'err'] as const) {
      if (this.partial[stream]) this.onLine(stream, this.partial[stream]);
      this.partial[stream] = '';
    }
  }

  private text(stream: 'out' | 'err', payload: string): void {
    const parts = (this.partial[stream] + payload).split(/\r?\n/);
    this.partial[stream] = parts.pop() ?? '';
    for (const line of parts) this.onLine(stream, line);
  }
}
