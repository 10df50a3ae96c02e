/**
 * Reads HAProxy's `show stat` (CSV, header line `# pxname,svname,qcur,qmax,scur,...`): the
 * sessions each backend serves now (scur of its BACKEND line), by backend name. Columns are
 * found by the header's names, so a HAProxy that adds or moves columns reads the same.
 */
export function backendSessions(csv: string): Map<string, number> {
  return new Map([...backendLoad(csv)].map(([backend, load]) => [backend, load.sessions]));
}

/** What a backend has now: sessions with its servers (scur) and requests waiting for one (qcur). */
export interface BackendLoad {
  sessions: number;
  queued: number;
  /** Sessions the backend served since HAProxy's worker started (stot): a request each in HTTP mode. */
  total?: number;
}

/** The scur and qcur of each BACKEND line of `show stat`, by backend name (columns found by the header's names). */
export function backendLoad(csv: string): Map<string, BackendLoad> {
  const lines = csv.split('\n');
  const header = lines[0]?.replace(/^#\s*/, '').split(',') ?? [];
  const [proxy, server, current, queue, totalColumn] = ['pxname', 'svname', 'scur', 'qcur', 'stot'].map((name) => header.indexOf(name));
  const loads = new Map<string, BackendLoad>();
  if (proxy === undefined || server === undefined || current === undefined || proxy < 0 || server < 0 || current < 0) return loads;
  for (const line of lines.slice(1)) {
    const fields = line.split(',');
    if (fields[server] !== 'BACKEND') continue;
    const sessions = Number(fields[current]);
    const queued = queue === undefined || queue < 0 ? 0 : Number(fields[queue] || 0);
    const total = totalColumn === undefined || totalColumn < 0 ? Number.NaN : Number(fields[totalColumn] || Number.NaN);
    if (fields[proxy] && Number.isFinite(sessions)) {
      loads.set(fields[proxy]!, { sessions, queued: Number.isFinite(queued) ? queued : 0, ...(Number.isFinite(total) ? { total } : {}) });
    }
  }
  return loads;
}

export interface RunningServer {
  backend: string;
  name: string;
  address: string;
  port: number;
  /** srv_admin_state: 0 when nothing (maintenance, drain) holds it back. */
  adminState: number;
}

/**
 * Reads `show servers state` (a version line, then `# be_id be_name srv_id srv_name srv_addr
 * srv_op_state srv_admin_state ... srv_port ...` and one line per server): every server HAProxy
 * runs, by the header's names.
 */
export function runningServers(text: string): RunningServer[] {
  const lines = text.split('\n');
  const headerAt = lines.findIndex((line) => line.startsWith('# be_id'));
  if (headerAt < 0) return [];
  const header = lines[headerAt]!.replace(/^#\s*/, '').split(' ');
  const column = (name: string) => header.indexOf(name);
  const [backend, name, address, port, admin] = ['be_name', 'srv_name', 'srv_addr', 'srv_port', 'srv_admin_state'].map(column);
  if ([backend, name, address, port, admin].some((i) => i === undefined || i < 0)) return [];
  const servers: RunningServer[] = [];
  for (const line of lines.slice(headerAt + 1)) {
    const fields = line.trim().split(' ');
    if (fields.length < header.length || line.startsWith('#')) continue;
    servers.push({
      backend: fields[backend!]!,
      name: fields[name!]!,
      address: fields[address!]!,
      port: Number(fields[port!]),
      adminState: Number(fields[admin!]),
    });
  }
  return servers;
}

/** The certificate files of `show ssl crt-list <file>` (its lines: a file, then its SNI filters). */
export function crtListFiles(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('/'))
    .map((line) => line.split(/\s+/)[0]!);
}
