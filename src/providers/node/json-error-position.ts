/**
 * Finds where a JSON text stops being valid JSON.
 *
 * `JSON.parse` errors do not carry a position on every Node version (newer V8 messages
 * quote the text instead), so the position shown to the user is computed here by a small
 * scanner that follows the JSON grammar (RFC 8259) and stops at the first character that
 * cannot continue it.
 */

export interface JsonErrorPosition {
  /** Offset (in UTF-16 code units) of the first character that breaks the grammar. */
  offset: number;
  /** 1-based line and column of that character. */
  line: number;
  column: number;
  /** The rule broken there: what was expected and what kind of character was found (never the character). */
  reason: string;
}

class JsonSyntaxStop extends Error {
  constructor(
    readonly offset: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/** 1-based line and column of an offset; a column counts characters from the line start. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text[i] === '\n') {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

const PUNCTUATION: Record<string, string> = {
  '{': 'an opening brace',
  '}': 'a closing brace',
  '[': 'an opening bracket',
  ']': 'a closing bracket',
  ',': 'a comma',
  ':': 'a colon',
  '"': 'a double quote',
  "'": 'a single quote',
  '\\': 'a backslash',
  '/': 'a slash',
  '#': 'a hash sign',
};

/**
 * What stands where the grammar broke, by its kind only: the file may be one the daemon read
 * with root's rights, so its characters are never quoted back.
 */
function describe(text: string, at: number): string {
  if (at >= text.length) return 'the end of the file';
  const ch = text[at]!;
  if (PUNCTUATION[ch]) return PUNCTUATION[ch];
  if (ch === '\n' || ch === '\r') return 'the end of the line';
  if (ch < ' ' || ch === '\u007f') return 'a control character';
  if (/[A-Za-z]/.test(ch)) return 'a letter';
  if (/[0-9]/.test(ch)) return 'a digit';
  if (/\s/.test(ch)) return 'a space';
  return ch.charCodeAt(0) > 0x7f ? 'a non-ASCII character' : 'another punctuation character';
}

/** Null when `text` is valid JSON, otherwise where and why it is not. */
export function findJsonError(text: string): JsonErrorPosition | null {
  let pos = 0;

  const fail = (reason: string): never => {
    throw new JsonSyntaxStop(pos, `${reason}, found ${describe(text, pos)}`);
  };
  const skipSpace = (): void => {
    while (pos < text.length && ' \t\n\r'.includes(text.charAt(pos))) pos++;
  };
  const literal = (word: string): void => {
    for (const ch of word) {
      if (text[pos] !== ch) fail(`expected "${word}"`);
      pos++;
    }
  };
  const isDigit = (ch: string | undefined): boolean => ch !== undefined && ch >= '0' && ch <= '9';
  const digits = (what: string): void => {
    if (!isDigit(text[pos])) fail(`expected a digit ${what}`);
    while (isDigit(text[pos])) pos++;
  };
  const number = (): void => {
    if (text[pos] === '-') pos++;
    if (text[pos] === '0') pos++;
    else digits('in a number');
    if (text[pos] === '.') {
      pos++;
      digits('after a decimal point');
    }
    if (text[pos] === 'e' || text[pos] === 'E') {
      pos++;
      if (text[pos] === '+' || text[pos] === '-') pos++;
      digits('in an exponent');
    }
  };
  const string = (): void => {
    pos++; // opening quote
    for (;;) {
      if (pos >= text.length) fail('expected a closing quote (")');
      const ch = text.charAt(pos);
      if (ch === '"') {
        pos++;
        return;
      }
      if (ch < ' ') fail('expected a closing quote (") before the end of the line; control characters must be escaped');
      if (ch === '\\') {
        pos++;
        const esc = text[pos];
        if (esc === 'u') {
          pos++;
          for (let i = 0; i < 4; i++) {
            if (!/[0-9a-fA-F]/.test(text[pos] ?? '')) fail('expected 4 hex digits after \\u');
            pos++;
          }
          continue;
        }
        if (esc === undefined || !'"\\/bfnrt'.includes(esc)) fail('expected a valid escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)');
      }
      pos++;
    }
  };
  const value = (): void => {
    skipSpace();
    const ch = text[pos];
    if (ch === '{') return object();
    if (ch === '[') return array();
    if (ch === '"') return string();
    if (ch === 't') return literal('true');
    if (ch === 'f') return literal('false');
    if (ch === 'n') return literal('null');
    if (ch === '-' || isDigit(ch)) return number();
    fail('expected a value (object, array, string, number, true, false or null)');
  };
  const object = (): void => {
    pos++;
    skipSpace();
    if (text[pos] === '}') {
      pos++;
      return;
    }
    for (;;) {
      skipSpace();
      if (text[pos] !== '"')
        fail(
          text[pos] === '}'
            ? 'expected a property name after the comma (a trailing comma is not allowed)'
            : 'expected a property name in double quotes',
        );
      string();
      skipSpace();
      if (text[pos] !== ':') fail('expected ":" after the property name');
      pos++;
      value();
      skipSpace();
      if (text[pos] === ',') {
        pos++;
        continue;
      }
      if (text[pos] === '}') {
        pos++;
        return;
      }
      fail('expected "," or "}" after a property value');
    }
  };
  const array = (): void => {
    pos++;
    skipSpace();
    if (text[pos] === ']') {
      pos++;
      return;
    }
    for (;;) {
      skipSpace();
      if (text[pos] === ']') fail('expected a value after the comma (a trailing comma is not allowed)');
      value();
      skipSpace();
      if (text[pos] === ',') {
        pos++;
        continue;
      }
      if (text[pos] === ']') {
        pos++;
        return;
      }
      fail('expected "," or "]" after an array element');
    }
  };

  try {
    value();
    skipSpace();
    if (pos < text.length) fail('expected the end of the file after the top-level value');
    return null;
  } catch (error) {
    if (!(error instanceof JsonSyntaxStop)) throw error;
    const { line, column } = lineAndColumn(text, error.offset);
    return { offset: error.offset, line, column, reason: error.reason };
  }
}
