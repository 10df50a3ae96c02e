import { CliError } from './errors.js';
import { NOT_IMPORTED, OWN_SECTION, type EnvVar } from './env-format.js';

/**
 * Reads `NAME=value` lines the way the reference tool's import does, and exactly back what
 * env-format.ts writes:
 * - `NAME="value"` or `NAME='value'`: the value may span lines; a quote inside is escaped with
 *   an odd number of backslashes (2k+1 stand for k backslashes and the quote), an even run right
 *   before the closing quote stands for half as many backslashes; other backslashes are literal;
 * - `NAME=value`: the rest of the line, as it is;
 * - blank lines and `#` comments are skipped.
 * A section of `slipway env` whose header ends with NOT_IMPORTED (an add-on's or a linked
 * app's variables) is read but left out, until the app's own header comes again.
 */
export interface ParsedEnvFile {
  variables: EnvVar[];
  /** Sections left out, with how many variables each held. */
  skipped: Array<{ source: string; count: number }>;
}

const HINT =
  'Write one NAME="value" per line, as `slipway env` prints them (a `"` inside a value is written \\"), or give JSON with --json.';

function lineNumber(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** Finds the quote that closes a value opened at `start`: one after an even run of backslashes. */
function closingQuote(text: string, start: number, quote: string): number {
  let slashes = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === quote && slashes % 2 === 0) return i;
    slashes = c === '\\' ? slashes + 1 : 0;
  }
  return -1;
}

function unescapeValue(raw: string, quote: string): string {
  const pattern = new RegExp(`(\\\\*)(${quote}|$)`, 'g');
  return raw.replace(pattern, (_m, slashes: string, q: string) =>
    q === quote ? '\\'.repeat((slashes.length - 1) / 2) + quote : '\\'.repeat(slashes.length / 2),
  );
}

export function parseEnvFile(text: string): ParsedEnvFile {
  const variables: EnvVar[] = [];
  const skipped: ParsedEnvFile['skipped'] = [];
  let skipping: { source: string; count: number } | undefined;
  let i = 0;
  while (i < text.length) {
    const end = text.indexOf('\n', i) === -1 ? text.length : text.indexOf('\n', i);
    const line = text.slice(i, end);
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) {
      if (trimmed.endsWith(NOT_IMPORTED)) {
        skipping = { source: trimmed.slice(1, -NOT_IMPORTED.length).trim(), count: 0 };
        skipped.push(skipping);
      } else if (trimmed === `# ${OWN_SECTION}`) {
        skipping = undefined;
      }
      i = end + 1;
      continue;
    }
    const equals = line.indexOf('=');
    if (equals === -1) {
      throw new CliError(`Line ${lineNumber(text, i)} has no "=": ${JSON.stringify(line)}.`, HINT);
    }
    const name = line.slice(0, equals);
    if (/^export\s/.test(name)) {
      throw new CliError(
        `Line ${lineNumber(text, i)} is shell syntax (${JSON.stringify(name)}): env import does not read \`--format shell\` output.`,
        'Save the variables with `slipway env > file` (or `--format json` and import with --json), then import that file.',
      );
    }
    const quote = line[equals + 1];
    let value: string;
    if (quote === '"' || quote === "'") {
      const open = i + equals + 2;
      const close = closingQuote(text, open, quote);
      if (close === -1) {
        throw new CliError(`The value of ${name} (line ${lineNumber(text, i)}) opens a ${quote} that never closes.`, HINT);
      }
      value = unescapeValue(text.slice(open, close), quote);
      const restEnd = text.indexOf('\n', close) === -1 ? text.length : text.indexOf('\n', close);
      const rest = text.slice(close + 1, restEnd);
      if (rest.trim() !== '') {
        throw new CliError(`Line ${lineNumber(text, close)} has ${JSON.stringify(rest.trim())} after the closing quote of ${name}.`, HINT);
      }
      i = restEnd + 1;
    } else {
      value = line.slice(equals + 1).replace(/\r$/, '');
      i = end + 1;
    }
    if (skipping) skipping.count++;
    else variables.push({ name, value });
  }
  return { variables, skipped };
}
