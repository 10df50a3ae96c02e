/** Longer lines are cut, as the app log cuts them (src/logs/log-hub.ts). */
const MAX_LINE = 64 * 1024;

/** Cuts a run's raw output into lines, per stream; what is left without a newline ends with the run. */
export class OutputLines {
  private readonly partial = { out: '', err: '' };
  private readonly decoders = { out: new TextDecoder(), err: new TextDecoder() };

  constructor(private readonly onLine: (stream: 'out' | 'err', line: string) => void) {}

  push(stream: 'out' | 'err', chunk: Buffer): void {
    let text = this.partial[stream] + this.decoders[stream].decode(chunk, { stream: true });
    for (let newline = text.indexOf('\n'); newline >= 0; newline = text.indexOf('\n')) {
      this.emit(stream, text.slice(0, newline));
      text = text.slice(newline + 1);
    }
    while (text.length > MAX_LINE) {
      this.emit(stream, text.slice(0, MAX_LINE));
      text = text.slice(MAX_LINE);
    }
    this.partial[stream] = text;
  }

  end(): void {
    for (const stream of ['out', 'err'] as const) {
      const rest = this.partial[stream] + this.decoders[stream].decode();
      this.partial[stream] = '';
      if (rest !== '') this.emit(stream, rest);
    }
  }

  private emit(stream: 'out' | 'err', line: string): void {
    this.onLine(stream, line.endsWith('\r') ? line.slice(0, -1) : line);
  }
}
