/**
 * Programs write colours into their logs with ECMA-48 escape sequences (Play's logback,
 * Spring Boot, npm). The console shows them as colours; every other escape sequence (cursor
 * moves, titles, hyperlinks) is dropped, never shown raw. Shared by the console's browser code,
 * which has no Node.js `util`.
 */

/** A piece of a line with the look it was written with: class names the console's stylesheet knows. */
export interface ColouredRun {
  text: string;
  classes: string[];
}

// CSI (ESC [ … final byte), OSC (ESC ] … BEL or ESC \), and two-byte escapes.
const ESCAPES = /\x1b\[([0-?]*)[ -/]*([@-~])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

/** The line cut into runs of one look each; text without escape sequences is one plain run. */
export function colouredRuns(line: string): ColouredRun[] {
  const runs: ColouredRun[] = [];
  let foreground: string | undefined;
  let bold = false;
  let at = 0;
  const push = (text: string) => {
    if (text === '') return;
    const classes = [...(foreground ? [`ansi-${foreground}`] : []), ...(bold ? ['ansi-bold'] : [])];
    runs.push({ text, classes });
  };
  for (const match of line.matchAll(ESCAPES)) {
    push(line.slice(at, match.index));
    at = match.index + match[0].length;
    if (match[2] !== 'm') continue; // not a colour: dropped
    const codes = (match[1] ?? '').split(';').map((c) => (c === '' ? 0 : Number(c)));
    for (let i = 0; i < codes.length; i++) {
      const code = codes[i]!;
      if (code === 0) {
        foreground = undefined;
        bold = false;
      } else if (code === 1) bold = true;
      else if (code === 22) bold = false;
      else if (code === 39) foreground = undefined;
      else if (code >= 30 && code <= 37) foreground = COLOURS[code - 30];
      else if (code >= 90 && code <= 97) foreground = `bright-${COLOURS[code - 90]}`;
      // 256-colour and true-colour forms carry their own arguments: skipped with them.
      else if (code === 38 || code === 48) i += codes[i + 1] === 5 ? 2 : codes[i + 1] === 2 ? 4 : 1;
    }
  }
  push(line.slice(at));
  return runs;
}

/** The line with every escape sequence taken out: what a file or a pipe should get. */
export function withoutTerminalCodes(line: string): string {
  return line.replace(ESCAPES, '');
}

const COLOURS = ['black', 'red', 'green', 'yellow', 'blue', 'magenta', 'cyan', 'white'];
