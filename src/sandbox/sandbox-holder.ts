/**
 * The process that holds a sandbox on the host (conmon, see ./sandbox-host.ts), as the host sees
 * it from outside: the pid it reports once the sandbox is created, the status it writes when the
 * sandbox ends, the record a daemon leaves in the bundle so that the next one finds it again, and
 * finding and ending holders through /proc. Apart from the host because these read the machine's
 * state (files, /proc) rather than drive runc, and a restart's adoption and sweep rest on them.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CONMON, exitDir } from './conmon-commands.js';

/** What a daemon leaves in a bundle for the next one to find its monitor again. */
export interface HolderRecord {
  pid: number;
  startedAt: number;
}

/** The pid conmon reports once the sandbox is created; undefined when it closes fd 3 without one. */
export function createdPid(report: NodeJS.ReadableStream): Promise<number | undefined> {
  return new Promise((resolve) => {
    let text = '';
    const finish = (pid: number | undefined) => {
      report.removeListener('data', onData);
      report.removeListener('close', onEnd);
      report.removeListener('end', onEnd);
      resolve(pid);
    };
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      const pid = Number(/"data":\s*(-?\d+)/.exec(text)?.[1]);
      if (Number.isInteger(pid)) finish(pid > 0 ? pid : undefined);
    };
    const onEnd = () => finish(undefined);
    report.on('data', onData);
    report.once('end', onEnd);
    report.once('close', onEnd);
  });
}

/** The status conmon wrote for the sandbox (`<bundle>/exit/<id>`), if it did. */
export function exitFileStatus(bundle: string, id: string): number | undefined {
  try {
    const status = Number(readFileSync(join(exitDir(bundle), id), 'utf8').trim());
    return Number.isInteger(status) ? status : undefined;
  } catch {
    return undefined;
  }
}

const HOLDER_FILE = 'holder.json';

export function writeHolder(bundle: string, record: HolderRecord): void {
  writeFileSync(join(bundle, HOLDER_FILE), JSON.stringify(record), { mode: 0o600 });
}

export function readHolder(bundle: string): HolderRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(join(bundle, HOLDER_FILE), 'utf8')) as Partial<HolderRecord>;
    return Number.isInteger(record.pid) && Number.isInteger(record.startedAt) ? (record as HolderRecord) : undefined;
  } catch {
    return undefined;
  }
}

/** conmon processes holding a bundle of this folder (of one sandbox, with `id`). */
export function monitorsOf(bundlesDir: string, id?: string): number[] {
  const marker = id === undefined ? `\0--bundle\0${bundlesDir}/` : `\0--bundle\0${bundlesDir}/${id}\0`;
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.startsWith(`${CONMON}\0`) && cmdline.includes(marker)) found.push(Number(entry));
    } catch {
      // ended while we looked
    }
  }
  return found;
}

export async function endMonitors(pids: number[]): Promise<void> {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  // Gone (not only signalled) before their bundles are removed: none writes there afterwards.
  for (let i = 0; i < 100 && pids.some((pid) => alive(pid)); i++) await sleep(20);
}

export function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX]/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
