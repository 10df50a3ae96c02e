/** The names PostgreSQL archives: segments, partial segments, backup history and timeline files. */
const WAL_FILE = /^(?:[0-9A-F]{24}(?:\.partial|\.[0-9A-F]{8}\.backup)?|[0-9A-F]{8}\.history)$/;

export function isWalFileName(name: string): boolean {
  return WAL_FILE.test(name);
}
