/**
 * Reads HAProxy's `show stat` (CSV, header line `# pxname,svname,qcur,qmax,scur,...`): the
 * sessions each backend serves now (scur of its BACKEND line), by backend name. Columns are
 * found by the header's names, so a HAProxy that adds or moves columns reads the same.
 */
export function backendSessions(csv: string): Map<string, number> {
  const lines = csv.split('\n');
  const header = lines[0]?.replace(/^#\s*/, '').split(',') ?? [];
  const [proxy, server, current] = ['pxname', 'svname', 'scur'].map((name) => header.indexOf(name));
  const sessions = new Map<string, number>();
  if (proxy === undefined || server === undefined || current === undefined || proxy < 0 || server < 0 || current < 0) return sessions;
  for (const line of lines.slice(1)) {
    const fields = line.split(',');
    if (fields[server] !== 'BACKEND') continue;
    const value = Number(fields[current]);
    if (fields[proxy] && Number.isFinite(value)) sessions.set(fields[proxy]!, value);
  }
  return sessions;
}
