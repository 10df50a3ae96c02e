import { StringDecoder } from 'node:string_decoder';

/**
 * Turns a byte stream into lines. `\n`, `\r\n` and a lone `\r` all end a line: build tools
 * redraw progress bars with `\r`, and each redraw is worth a log line of its own.
 * A multi-byte character split across chunks is decoded whole, a `\r\n` split across chunks
 * counts once, and the last line is emitted by `end()` even without a trailing newline.
 * A line longer than `maxLineLength` is cut so one runaway line cannot hold memory forever.
 */
export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  private lastWasCR = false;

  constructor(
    private readonly emit: (line: string) => void,
    private readonly maxLineLength = 64 * 1024,
  ) {}

  push(chunk: Buffer | string): void {
    const text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 10 /* \n */) {
        if (this.lastWasCR && i === start && this.pending === '') {
          // Second half of a \r\n whose \r already ended the line.
          start = i + 1;
          this.lastWasCR = false;
          continue;
        }
        this.flush(text.slice(start, i));
        start = i + 1;
        this.lastWasCR = false;
      } else if (c === 13 /* \r */) {
        this.flush(text.slice(start, i));
        start = i + 1;
        this.lastWasCR = true;
      } else {
        this.lastWasCR = false;
      }
    }
    this.pending += text.slice(start);
    while (this.pending.length > this.maxLineLength) {
      this.emit(this.pending.slice(0, this.maxLineLength));
      this.pending = this.pending.slice(this.maxLineLength);
    }
  }

  /** Emits what is left (a last line without newline). */
  end(): void {
    this.pending += this.decoder.end();
    if (this.pending !== '') this.emit(this.pending);
    this.pending = '';
    this.lastWasCR = false;
  }

  private flush(tail: string): void {
    let line = this.pending + tail;
    this.pending = '';
    while (line.length > this.maxLineLength) {
      this.emit(line.slice(0, this.maxLineLength));
      line = line.slice(this.maxLineLength);
    }
    this.emit(line);
  }
}
