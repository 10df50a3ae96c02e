/** Longer lines are cut, as the app log cuts them (src/logs/log-hub.ts). */
const MAX_LINE = 64 * 1024;

/**
 * A one-off run's output, also written to the app's log as lines marked `[run]`, so `slipway
 * logs` and the app's log drains carry it like the instances' output. Returns the `onData` to
 * give the run and the function that writes what is left without a newline once it ended.
 */
export function oneOffLog(
  append: (stream: 'out' | 'err', line: string) => void,
  onData: (stream: 'out' | 'err', chunk: Buffer) => void,
): { onData: (stream: 'out' | 'err', chunk: Buffer) => void; end(): void } {
  const partial = { out: '', err: '' };
  const decoders = { out: new TextDecoder(), err: new TextDecoder() };
  const emit = (stream: 'out' | 'err', line: string) => append(stream, `[run] ${line.endsWith('\r') ? line.slice(0, -1) : line}`);
  return {
    onData(stream, chunk) {
      onData(stream, chunk);
      let text = partial[stream] + decoders[stream].decode(chunk, { stream: true });
      for (let newline = text.indexOf('\n'); newline >= 0; newline = text.indexOf('\n')) {
        emit(stream, text.slice(0, newline));
        text = text.slice(newline + 1);
      }
      while (text.length > MAX_LINE) {
        emit(stream, text.slice(0, MAX_LINE));
        text = text.slice(MAX_LINE);
      }
      partial[stream] = text;
    },
    end() {
      for (const stream of ['out', 'err'] as const) {
        const rest = partial[stream] + decoders[stream].decode();
        partial[stream] = '';
        if (rest !== '') emit(stream, rest);
      }
    },
  };
}
