import type { CommandContext } from './command.js';

/** Prints rows as an aligned table for people, or the raw data as JSON for programs. */
export function printTable<T extends Record<string, unknown>>(
  ctx: CommandContext,
  rows: T[],
  columns: Array<keyof T & string>,
  json: unknown = rows,
): void {
  if (ctx.format === 'json') {
    ctx.out(JSON.stringify(json, null, 2) + '\n');
    return;
  }
  if (rows.length === 0) {
    ctx.err('(none)\n');
    return;
  }
  const cells = rows.map((row) => columns.map((c) => String(row[c] ?? '')));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: string[]) => values.map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]!))).join('  ') + '\n';
  ctx.out(line(columns.map((c) => c.toUpperCase())));
  for (const r of cells) ctx.out(line(r));
}

export function printObject(ctx: CommandContext, data: Record<string, unknown>, json: unknown = data): void {
  if (ctx.format === 'json') {
    ctx.out(JSON.stringify(json, null, 2) + '\n');
    return;
  }
  const width = Math.max(...Object.keys(data).map((k) => k.length));
  for (const [key, value] of Object.entries(data)) ctx.out(`${key.padEnd(width)}  ${value ?? ''}\n`);
}
