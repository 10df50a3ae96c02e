import { stripVTControlCharacters } from 'node:util';
import type { LogEntry } from '../shared/api-types.js';
import { NdjsonReader } from '../shared/ndjson.js';
import type { CommandContext } from './command.js';
import { CliError } from './errors.js';
import { matchesSearch, pastUntil, type LogFilter } from './log-filter.js';

/** A record of a log stream, as the API sends it. */
export type LogLine = LogEntry;

/**
 * Reads an NDJSON log stream from the API, printing each line as it comes. Resolves with the
 * closing record (state and message for deployments).
 */
export async function followLog(
  ctx: CommandContext,
  path: string,
  options: {
    follow: boolean;
    print?: (entry: LogLine) => void;
    filter?: LogFilter;
    stop?: AbortSignal;
    /** Keep the programs' colour codes (a terminal shows them); default: only when stdout is one. */
    keepColours?: boolean;
  },
): Promise<LogLine> {
  const abort = new AbortController();
  // The caller may end the stream early (it learnt what it waited for); what came so far was printed.
  options.stop?.addEventListener('abort', () => abort.abort(), { once: true });
  const response = await ctx
    .client()
    .raw('GET', `${path}${path.includes('?') ? '&' : '?'}follow=${options.follow ? 1 : 0}`, undefined, abort.signal);
  if (!response.ok) {
    const text = await response.text();
    let message = `The daemon answered ${response.status}.`;
    try {
      message = JSON.parse(text).error.message;
    } catch {
      /* not JSON */
    }
    throw new CliError(message);
  }
  // A file or a pipe gets the text without the escape sequences a terminal would turn into colours.
  const keepColours = options.keepColours ?? process.stdout.isTTY === true;
  const text = (line: string | undefined) => (keepColours || line === undefined ? line : stripVTControlCharacters(line));
  const print =
    options.print ??
    ((entry: LogLine) => (ctx.format === 'json' ? ctx.out(JSON.stringify(entry) + '\n') : ctx.out(`${text(entry.line)}\n`)));
  const decoder = new TextDecoder();
  const records = new NdjsonReader<LogLine>();
  let last: LogLine = {};
  const filter = options.filter ?? {};
  // Following up to a time in the future ends at that time, lines or not.
  const untilTimer =
    filter.until && options.follow ? setTimeout(() => abort.abort(), Math.max(0, Date.parse(filter.until) - Date.now())) : undefined;
  try {
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      for (const entry of records.push(decoder.decode(chunk, { stream: true }))) {
        if (entry.end) last = entry;
        else if (pastUntil(entry, filter)) {
          // Lines come in time order: nothing after this one is wanted.
          abort.abort();
          return last;
        } else if (matchesSearch(entry, filter)) print(entry);
      }
    }
  } catch (error) {
    // Ended on purpose (the caller learnt what it waited for, --until came): the cut stream says
    // so in its own words ("aborted"), which are not an error here.
    if (!abort.signal.aborted && (error as Error).name !== 'AbortError') throw error;
  } finally {
    clearTimeout(untilTimer);
  }
  return last;
}
