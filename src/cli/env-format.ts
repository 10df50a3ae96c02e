/** `NAME=value`, quoting values that would not survive as a bare word (multi-line, spaces, quotes). */
export function formatEnvLine({ name, value }: { name: string; value: string }): string {
  return /^[A-Za-z0-9_./:@%+,-]*$/.test(value) ? `${name}=${value}` : `${name}=${JSON.stringify(value)}`;
}

/** A line a POSIX shell can source: single quotes, with embedded single quotes escaped. */
export function formatShellLine({ name, value }: { name: string; value: string }): string {
  return `export ${name}='${value.replace(/'/g, `'\\''`)}'`;
}
