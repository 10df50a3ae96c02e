/**
 * The daemon's hold on the supervisor it talks to: starting it (and waiting for HAProxy to
 * answer), a reload, the record of HAProxy's deaths told once each, and the watch every 250 ms
 * for the supervisor's death and HAProxy's.
 */
import { truncate } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { engineEnv } from '../engine-process.js';
import type { HaproxyPaths } from './config.js';
import { haproxyArgv, workerPid } from './haproxy-process.js';
import { describeExit, isAlive, readExits, type EngineExit, type SupervisorRecord } from './supervisor-files.js';
import { fileSize, outputSince, signalSupervisor, startSupervisor } from './supervisor-control.js';

/** How often the daemon looks at its supervisor (/proc) and at the record of HAProxy's deaths (a stat). */
const WATCH_INTERVAL_MS = 250;

/** supervisor.log is emptied once it is this long (HAProxy notes each runtime change there), at a start and once a minute. */
const SUPERVISOR_LOG_LIMIT = 1024 * 1024;

export interface SupervisorLinkOptions {
  workDir: string;
  paths: HaproxyPaths;
  binary: string;
  drainTimeoutSeconds: number;
  /** What HAProxy listens on, as a failed start names it (`127.0.0.1:80 or :443`). */
  listening: string;
  log: (line: string) => void;
  onEngineRestart: ((exit: EngineExit) => void) | undefined;
}

export class SupervisorLink {
  /** The supervisor this daemon talks to; undefined before start() and after detach() or stop(). */
  record: SupervisorRecord | undefined;
  /** Bytes of exits.jsonl reported so far. */
  exitsReported = 0;
  private watcher: NodeJS.Timeout | undefined;
  private recovering = false;

  constructor(private readonly o: SupervisorLinkOptions) {}

  /** Starts the supervisor of this work folder, detached (a fresh start or a replacement), and waits until HAProxy answers. */
  async launch(): Promise<void> {
    const paths = this.o.paths;
    const logStart = fileSize(paths.holderLog);
    this.record = await startSupervisor({
      workDir: this.o.workDir,
      pidFile: paths.holderPid,
      logFile: paths.holderLog,
      drainSeconds: this.o.drainTimeoutSeconds,
      haproxyArgv: haproxyArgv(this.o.binary, paths.config),
      env: engineEnv(),
    });
    await this.waitForWorker(undefined, logStart);
  }

  /** A reload through the supervisor (HAProxy re-reads its configuration; connections in flight finish). */
  async reload(): Promise<void> {
    const oldPid = await workerPid(this.o.paths.adminSocket);
    if (!signalSupervisor(this.record!, 'SIGUSR2')) this.assertRunning('reload HAProxy');
    await this.waitForWorker(oldPid, undefined);
  }

  /**
   * Waits until a worker (another one than `oldPid` after a reload) answers on the admin socket.
   * `startedAtLog`: HAProxy was just started from supervisor.log's offset; a death recorded
   * meanwhile fails at once, quoting what HAProxy said (a port taken, a bad certificate).
   */
  async waitForWorker(oldPid: string | undefined, startedAtLog: number | undefined): Promise<void> {
    const { paths } = this.o;
    const deadline = Date.now() + 15_000;
    const said = () => outputSince(paths.holderLog, startedAtLog ?? fileSize(paths.holderLog) - 4000) || 'nothing';
    for (;;) {
      this.assertRunning('start HAProxy');
      const pid = await workerPid(paths.adminSocket);
      if (pid && pid !== oldPid) return;
      if (startedAtLog !== undefined && fileSize(paths.exits) > this.exitsReported)
        throw new Error(
          `HAProxy exited as it started. It said: ${said()}. A common cause is another process listening on ${this.o.listening}.`,
        );
      if (Date.now() > deadline) throw new Error(`HAProxy did not start serving within 15 s. It said: ${said()}`);
      await sleep(20);
    }
  }

  assertRunning(action: string): void {
    const supervisor = this.record;
    if (!supervisor) throw new Error(`Cannot ${action}: the HAProxy router is not started. Call start() first.`);
    if (!isAlive(supervisor)) {
      const log = this.o.paths.holderLog;
      throw new Error(
        `Cannot ${action}: the router's supervisor (pid ${supervisor.pid}) exited. It said: ${outputSince(log, fileSize(log) - 2000) || 'nothing'}`,
      );
    }
  }

  /** Tells the daemon of each death recorded since the last one told; returns how many. */
  reportExits(): number {
    const { exits, offset } = readExits(this.o.paths.exits, this.exitsReported);
    this.exitsReported = offset;
    for (const exit of exits) {
      this.o.log(describeExit(exit));
      this.o.onEngineRestart?.(exit);
    }
    return exits.length;
  }

  /** The supervisor and HAProxy append to it (O_APPEND): emptied, it goes on from its start. */
  async trimLog(): Promise<void> {
    const log = this.o.paths.holderLog;
    if (fileSize(log) > SUPERVISOR_LOG_LIMIT) await truncate(log, 0).catch(() => undefined);
  }

  /**
   * Looks for the supervisor's death and HAProxy's (every 250 ms: a read of /proc and a stat):
   * `supervisorGone` or `engineRestarted` (after the deaths were told) runs, one at a time.
   */
  watch(supervisorGone: () => Promise<void>, engineRestarted: () => Promise<void>): void {
    let ticks = 0;
    this.watcher = setInterval(() => {
      if (!this.record || this.recovering) return;
      if (++ticks % 240 === 0) void this.trimLog();
      if (!isAlive(this.record)) {
        this.recovering = true;
        void supervisorGone()
          .catch((error: Error) => this.o.log(`Could not start the router's supervisor again: ${error.message}`))
          .finally(() => (this.recovering = false));
        return;
      }
      if (fileSize(this.o.paths.exits) === this.exitsReported) return;
      if (this.reportExits() === 0) return;
      this.recovering = true;
      void engineRestarted()
        .catch((error: Error) => this.o.log(`After HAProxy started again, the router could not be brought up to date: ${error.message}`))
        .finally(() => (this.recovering = false));
    }, WATCH_INTERVAL_MS);
    this.watcher.unref();
  }

  stopWatching(): void {
    clearInterval(this.watcher);
    this.watcher = undefined;
  }
}
