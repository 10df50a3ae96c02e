/**
 * Figures the runtime API gives of the worker serving now: client connections, access records
 * dropped (summed over the workers a reload replaced) and each app's sessions.
 */
import { workerInfo } from './haproxy-process.js';
import { runtimeCommand } from './runtime-api.js';
import { type BackendLoad, backendLoad, backendSessions } from './stats.js';

export class RuntimeFigures {
  /** DroppedLogs of the workers before the current one, and the current one's pid and count. */
  private droppedBefore = 0;
  private droppedNow: { pid: string; count: number } | undefined;

  constructor(
    private readonly adminSocket: string,
    private readonly appOfBackend: (backend: string) => string | undefined,
  ) {}

  /** A new router: no worker counted yet. */
  reset(): void {
    this.droppedBefore = 0;
    this.droppedNow = undefined;
  }

  async activeConnections(): Promise<number | undefined> {
    const match = /^CurrConns: (\d+)/m.exec(await workerInfo(this.adminSocket));
    return match ? Number(match[1]) : undefined;
  }

  async droppedAccessRecords(): Promise<number | undefined> {
    const info = await workerInfo(this.adminSocket);
    const pid = /^Pid: (\d+)/m.exec(info)?.[1];
    const count = /^DroppedLogs: (\d+)/m.exec(info)?.[1];
    if (pid === undefined || count === undefined) return undefined;
    if (this.droppedNow && this.droppedNow.pid !== pid) this.droppedBefore += this.droppedNow.count;
    this.droppedNow = { pid, count: Number(count) };
    return this.droppedBefore + this.droppedNow.count;
  }

  async appConnections(): Promise<Map<string, number> | undefined> {
    const stat = await runtimeCommand(this.adminSocket, 'show stat', undefined, 2000).catch(() => undefined);
    if (stat === undefined) return undefined;
    const byApp = new Map<string, number>();
    for (const [backend, sessions] of backendSessions(stat)) {
      const appId = this.appOfBackend(backend);
      if (appId !== undefined) byApp.set(appId, (byApp.get(appId) ?? 0) + sessions);
    }
    return byApp;
  }

  /** Each app's sessions and queued requests now (summed over its backends). */
  async appLoad(): Promise<Map<string, BackendLoad> | undefined> {
    const stat = await runtimeCommand(this.adminSocket, 'show stat', undefined, 2000).catch(() => undefined);
    if (stat === undefined) return undefined;
    const byApp = new Map<string, BackendLoad>();
    for (const [backend, load] of backendLoad(stat)) {
      const appId = this.appOfBackend(backend);
      if (appId === undefined) continue;
      const sum = byApp.get(appId) ?? { sessions: 0, queued: 0, total: 0 };
      const total = sum.total === undefined || load.total === undefined ? undefined : sum.total + load.total;
      byApp.set(appId, {
        sessions: sum.sessions + load.sessions,
        queued: sum.queued + load.queued,
        ...(total === undefined ? {} : { total }),
      });
    }
    return byApp;
  }
}
