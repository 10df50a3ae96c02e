const UNITS = [
  ['TiB', 1024 ** 4],
  ['GiB', 1024 ** 3],
  ['MiB', 1024 ** 2],
  ['KiB', 1024],
] as const;

/**
 * "2 GiB", "64 MiB", "1.5 GiB", "900 KiB", "12 B": the largest unit that fits, at most one
 * decimal. The one way slipway prints a size, in messages, the CLI and the console alike.
 */
export function humanSize(bytes: number): string {
  for (const [unit, size] of UNITS) {
    if (bytes >= size) return `${Math.round((bytes / size) * 10) / 10} ${unit}`;
  }
  return `${bytes} B`;
}
