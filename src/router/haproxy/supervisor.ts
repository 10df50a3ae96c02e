/**
 * The router's supervisor (the "holder"): a small program of its own that runs HAProxy and
 * outlives the daemon. The daemon starts it in its own session (supervisor-control.ts), with its
 * output in `supervisor.log`; SIGTERM, SIGINT or SIGKILL of the daemon never reach it.
 *
 *   node supervisor.js <work folder> <drain seconds> <haproxy argv...>
 *
 * - It holds the access log's FIFO open read-write and hands it to HAProxy as fd 3, so the pipe
 *   stays valid while no daemon reads it (lines wait in it, or HAProxy drops and counts them).
 * - HAProxy dying for any reason (kill -9 of its master, a worker killed by the OOM killer, which
 *   makes the master exit) is seen at once: the death is appended to `exits.jsonl` and HAProxy is
 *   started again from the files the daemon keeps in step (configuration with every server,
 *   maps, crt-list, certificates). A HAProxy that keeps dying right after its start is started
 *   again with a growing pause (up to 5 s), not in a tight loop.
 * - SIGUSR2: passed on to HAProxy (a reload, when the apps outgrow the backends).
 * - SIGUSR1 or SIGTERM: soft-stops HAProxy (SIGUSR1: requests in flight finish, bounded by the
 *   drain period), then exits.
 * - Its work folder removed: it stops HAProxy and exits (nothing could start HAProxy again).
 *
 * HAProxy runs under `setpriv --pdeathsig TERM` (startAttachedServer): should the supervisor
 * itself be killed, HAProxy goes with it rather than serving on, unsupervised, beside the one
 * the next supervisor starts.
 */
import { closeSync, constants, openSync, statSync, unlinkSync, writeFileSync, appendFileSync } from 'node:fs';
import { backoffDelay } from '../../executor/restart-backoff.js';
import { startAttachedServer, type AttachedServer } from '../../executor/start-attached.js';
import { stopGracefully } from '../engine-process.js';
import { enlargePipe } from './access-log.js';
import { haproxyPaths } from './config.js';
import { exitLine, processStartTime, QUICK_DEATH_MS, RESTART_BACKOFF, writeSupervisorRecord } from './supervisor-files.js';

const [workDir, drainArg, ...haproxyArgv] = process.argv.slice(2);

function say(line: string): void {
  process.stderr.write(`${new Date().toISOString()} supervisor: ${line}\n`);
}

async function main(): Promise<void> {
  const drainSeconds = Number(drainArg);
  if (!workDir || !Number.isInteger(drainSeconds) || haproxyArgv.length === 0) {
    say('usage: supervisor.js <work folder> <drain seconds> <haproxy argv...>');
    process.exit(2);
  }
  const paths = haproxyPaths(workDir);
  const folder = statSync(workDir);
  // Read-write: the pipe always has a reader, so HAProxy never sees it broken while no daemon reads.
  const pipe = openSync(paths.accessPipe, constants.O_RDWR | constants.O_NONBLOCK);
  if (!(await enlargePipe(pipe))) say('could not enlarge the access log pipe (perl, fs.pipe-max-size): it keeps 64 KiB');

  let stopping = false;
  let child: AttachedServer | undefined;
  let wake: (() => void) | undefined;
  const stop = (why: string) => {
    if (stopping) return;
    stopping = true;
    say(`${why}: stopping HAProxy`);
    wake?.();
    const running = child;
    if (running && !running.exitStatus())
      void stopGracefully({ kill: (signal) => running.signal(signal) }, running.exited, 'SIGUSR1', drainSeconds);
  };
  process.on('SIGUSR1', () => stop('SIGUSR1'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGUSR2', () => {
    if (child?.signal('SIGUSR2')) say('reloading HAProxy (SIGUSR2)');
  });
  // No terminal and its own session: these only come from someone's mistake.
  for (const signal of ['SIGHUP', 'SIGINT'] as const) process.on(signal, () => say(`${signal} ignored`));
  // Only now, with its signals handled, may the daemon find it.
  writeSupervisorRecord(paths.holderPid, { pid: process.pid, startTime: processStartTime(process.pid)! });
  const folderCheck = setInterval(() => {
    let gone: boolean;
    try {
      gone = statSync(workDir).ino !== folder.ino;
    } catch {
      gone = true;
    }
    if (gone) stop('the work folder was removed');
  }, 5000);

  let quickDeaths = 0;
  while (!stopping) {
    const started = Date.now();
    let exit: { exitCode: number | null; signal: string | null };
    let pid = 0;
    try {
      child = await startAttachedServer({
        argv: haproxyArgv,
        cwd: '/',
        env: process.env as Record<string, string>,
        fd3: pipe,
        onLine: (_stream, line) => process.stderr.write(`${line}\n`),
      });
      pid = child.pid;
      writeFileSync(paths.haproxyPid, `${pid}\n`, { mode: 0o600 });
      // A stop asked for while HAProxy was starting.
      if (stopping) void stopGracefully({ kill: (signal) => child!.signal(signal) }, child.exited, 'SIGUSR1', drainSeconds);
      exit = await child.exited;
    } catch (error) {
      say((error as Error).message);
      exit = { exitCode: null, signal: null };
    }
    child = undefined;
    if (stopping) break;
    appendFileSync(paths.exits, exitLine({ time: new Date(), pid, exitCode: exit.exitCode, signal: exit.signal }), { mode: 0o600 });
    quickDeaths = Date.now() - started < QUICK_DEATH_MS ? quickDeaths + 1 : 0;
    const delay = backoffDelay(quickDeaths, RESTART_BACKOFF);
    say(
      `HAProxy (pid ${pid}) ${exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.exitCode}`}; starting it again${delay ? ` in ${delay} ms` : ''}`,
    );
    if (delay)
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, delay);
      });
  }
  clearInterval(folderCheck);
  closeSync(pipe);
  for (const file of [paths.holderPid, paths.haproxyPid]) {
    try {
      unlinkSync(file);
    } catch {
      // Already gone (the work folder was removed).
    }
  }
  say('stopped');
}

await main();
process.exit(0);
