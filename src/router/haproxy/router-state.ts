/**
 * The router's state for the next daemon, in `state.json` of its work folder: what HAProxy's
 * own files cannot tell (which app owns which backend, the servers' names, the next name, the
 * certificates' names, how far the record of deaths was reported). Written after each change,
 * atomically; HAProxy itself never reads it.
 */
import { readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import type { HaproxyServer } from './config.js';

export interface RouterState {
  /** Backends in the configuration (`app0`...). */
  slots: number;
  /** Every backend an app was given: its app (kept after the app left, for late access lines) and its servers now. */
  backends: Array<{ slot: number; appId: string; servers: HaproxyServer[] }>;
  /** The backend of each app routed now. */
  assigned: Array<{ appId: string; slot: number }>;
  /** Backends given back, with when (milliseconds since the epoch). */
  freeSlots: Array<{ slot: number; since: number }>;
  /** The number of the next server name (`i<n>`). */
  nextServer: number;
  /** Certificates served, by file (their PEM is the file). */
  certificates: Array<{ file: string; names: string[] }>;
  /** Bytes of `exits.jsonl` already reported to a daemon. */
  exitsReported: number;
}

const isCount = (value: unknown): value is number => Number.isInteger(value) && (value as number) >= 0;
const isServer = (s: unknown): s is HaproxyServer => {
  const server = s as HaproxyServer;
  return typeof server?.name === 'string' && typeof server.address === 'string' && isCount(server.port);
};

/** The state a previous daemon saved, or undefined when there is none or it is not one (then the router starts afresh). */
export function loadRouterState(path: string): RouterState | undefined {
  let raw: Partial<RouterState>;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8')) as Partial<RouterState>;
  } catch {
    return undefined;
  }
  const valid =
    isCount(raw.slots) &&
    raw.slots > 0 &&
    isCount(raw.nextServer) &&
    isCount(raw.exitsReported) &&
    Array.isArray(raw.backends) &&
    raw.backends.every((b) => isCount(b?.slot) && typeof b.appId === 'string' && Array.isArray(b.servers) && b.servers.every(isServer)) &&
    Array.isArray(raw.assigned) &&
    raw.assigned.every((a) => typeof a?.appId === 'string' && isCount(a.slot)) &&
    Array.isArray(raw.freeSlots) &&
    raw.freeSlots.every((f) => isCount(f?.slot) && isCount(f.since)) &&
    Array.isArray(raw.certificates) &&
    raw.certificates.every((c) => typeof c?.file === 'string' && Array.isArray(c.names) && c.names.every((n) => typeof n === 'string'));
  return valid ? (raw as RouterState) : undefined;
}

export async function saveRouterState(path: string, state: RouterState): Promise<void> {
  await writeFileAtomically(path, JSON.stringify(state) + '\n');
}

/** Writes a whole file under a temporary name, then renames it: a reader (HAProxy starting again) never sees half of it. */
export async function writeFileAtomically(path: string, text: string): Promise<void> {
  await writeFile(`${path}.tmp`, text, { mode: 0o600 });
  await rename(`${path}.tmp`, path);
}
