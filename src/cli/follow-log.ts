import type { CommandContext } from './command.js';
import { CliError } from './errors.js';

export interface LogLine {
  time?: string;
  stream?: string;
  line?: string;
  end?: boolean;
  state?: string;
  message?: string | null;
}

/**
 * Reads an NDJSON log stream from the API, printing each line as it comes. Resolves with the
 * closing record (state and message for deployments).
 */
export async function followLog(ctx: CommandContext, path: string, options: { follow: boolean; print?: (entry: LogLine) => void }): Promise<LogLine> {
  const response = await ctx.client().raw('GET', `${path}${path.includes('?') ? '&' : '?'}follow=${options.follow ? 1 : 0}`);
  if (!response.ok || !response.body) {
    const text = await response.text();
    let message = `The daemon answered ${response.status}.`;
    try {
      message = JSON.parse(text).error.message;
    } catch {
      /* not JSON */
    }
    throw new CliError(message);
  }
  const print = options.print ?? ((entry: LogLine) => (ctx.format === 'json' ? ctx.out(JSON.stringify(entry) + '\n') : ctx.out(`${entry.line}\n`)));
  const decoder = new TextDecoder();
  let buffer = '';
  let last: LogLine = {};
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const text = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      if (!text) continue;
      const entry = JSON.parse(text) as LogLine;
      if (entry.end) last = entry;
      else print(entry);
    }
  }
  return last;
}
