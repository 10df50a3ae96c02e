/**
 * What an idle add-on server costs in memory: one PostgreSQL and one Redis add-on of a real
 * daemon, left idle, their processes' PSS (proportional set size: shared pages divided among
 * the processes that share them) and RSS summed; the baseline is the same server programs
 * started with their stock settings (initdb's postgresql.conf; redis-server with no options)
 * in the same run. Targets: PostgreSQL <= 40 MiB PSS, Redis <= 5 MiB.
 *
 *   node --import tsx bench/addon-idle.ts
 */
import { spawn, type ChildProcess, execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDaemon, type TestDaemon } from '../test/support/daemon.js';

const PG_BIN = '/usr/lib/postgresql/15/bin';
const IDLE_MS = 15_000;
const MiB = 1024 * 1024;

export interface Footprint {
  processes: number;
  pssBytes: number;
  rssBytes: number;
}

export interface AddonIdleResult {
  postgresql: Footprint;
  postgresqlStock: Footprint;
  redis: Footprint;
  redisStock: Footprint;
}

/** The pid and every descendant of it. */
function family(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const all: number[] = [];
  const walk = (p: number) => {
    all.push(p);
    for (const child of children.get(p) ?? []) walk(child);
  };
  walk(pid);
  return all;
}

function footprint(pid: number): Footprint {
  let pss = 0;
  let rss = 0;
  const pids = family(pid);
  let counted = 0;
  for (const p of pids) {
    let rollup: string;
    try {
      rollup = readFileSync(`/proc/${p}/smaps_rollup`, 'utf8');
    } catch {
      continue; // a short-lived child ended meanwhile
    }
    counted++;
    pss += Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0) * 1024;
    rss += Number(/^Rss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0) * 1024;
  }
  return { processes: counted, pssBytes: pss, rssBytes: rss };
}

function pidFile(path: string): number {
  return Number(readFileSync(path, 'utf8').split('\n')[0]);
}

async function cliJson<T>(daemon: TestDaemon, args: string[]): Promise<T> {
  const result = await daemon.cli([...args, '--format', 'json']);
  if (result.code !== 0) throw new Error(`slipway ${args.join(' ')} failed:\n${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

/** PostgreSQL 15 as initdb leaves it (its postgresql.conf), as `nobody`, on a unix socket only. */
async function stockPostgres(dir: string): Promise<{ pid: number; stop(): void }> {
  const data = join(dir, 'pg');
  execFileSync('mkdir', ['-p', data]);
  chownSync(dir, 65534, 65534);
  chownSync(data, 65534, 65534);
  execFileSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', join(PG_BIN, 'initdb'), '-D', data, '-A', 'trust'], {
    stdio: 'ignore',
  });
  const server: ChildProcess = spawn(
    'setpriv',
    ['--reuid=65534', '--regid=65534', '--clear-groups', join(PG_BIN, 'postgres'), '-D', data, '-c', 'listen_addresses=', '-k', dir],
    { stdio: 'ignore' },
  );
  for (let i = 0; i < 100; i++) {
    try {
      return { pid: pidFile(join(data, 'postmaster.pid')), stop: () => server.kill('SIGINT') };
    } catch {
      await sleep(100);
    }
  }
  throw new Error('the stock PostgreSQL did not start');
}

export async function benchAddonIdle(): Promise<AddonIdleResult> {
  const daemon = await startDaemon();
  const scratch = mkdtempSync(join(tmpdir(), 'slipway-bench-idle-'));
  const stopping: Array<() => void> = [];
  try {
    const pg = await cliJson<{ id: string }>(daemon, ['addon', 'create', 'postgresql', 'idle-db']);
    const redis = await cliJson<{ id: string }>(daemon, ['addon', 'create', 'redis', 'idle-cache']);
    const stockPg = await stockPostgres(scratch);
    stopping.push(stockPg.stop);
    const stockRedis = spawn(
      'setpriv',
      [
        '--reuid=65534',
        '--regid=65534',
        '--clear-groups',
        'redis-server',
        '--port',
        '0',
        '--unixsocket',
        join(scratch, 'redis.sock'),
        '--dir',
        scratch,
      ],
      { stdio: 'ignore', cwd: scratch },
    );
    stopping.push(() => stockRedis.kill('SIGTERM'));
    await sleep(IDLE_MS);
    return {
      postgresql: footprint(pidFile(join(daemon.dataDir, 'postgresql', pg.id, 'data', 'postmaster.pid'))),
      postgresqlStock: footprint(stockPg.pid),
      redis: footprint(pidFile(join(daemon.dataDir, 'redis', redis.id, 'redis.pid'))),
      redisStock: footprint(stockRedis.pid!),
    };
  } finally {
    for (const stop of stopping) stop();
    await sleep(1000);
    await daemon.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

export function describeAddonIdle(r: AddonIdleResult): string {
  const mib = (b: number) => `${(b / MiB).toFixed(1)} MiB`;
  const line = (name: string, own: Footprint, stock: Footprint, target: number) =>
    `  ${name}: PSS ${mib(own.pssBytes)} (target <= ${target} MiB), RSS ${mib(own.rssBytes)}, ${own.processes} process(es); ` +
    `${(own.pssBytes / stock.pssBytes).toFixed(2)}x the stock server's PSS ${mib(stock.pssBytes)} (${stock.processes} process(es))`;
  return [
    `idle add-on servers, after ${IDLE_MS / 1000} s idle:`,
    line('PostgreSQL add-on', r.postgresql, r.postgresqlStock, 40),
    line('Redis add-on', r.redis, r.redisStock, 5),
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const result = await benchAddonIdle();
  console.log(describeAddonIdle(result));
  console.log(JSON.stringify(result));
}
