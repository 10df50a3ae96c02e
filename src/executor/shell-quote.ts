/**
 * A word as /bin/sh reads it back unchanged: in single quotes, each quote inside closed, escaped
 * and opened again. For the few lines the platform hands a shell (scripts it writes, commands a
 * program runs through sh); everything else runs from argv arrays.
 */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
