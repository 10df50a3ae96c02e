/**
 * Which app owns which backend (`app0`...) and the servers each backend has, kept in step with
 * HAProxy through the runtime API: new servers added and enabled, removed ones put in
 * maintenance (no new request; requests in flight finish) and deleted once idle. A backend an
 * app gave back is reused only after a minute, so late access log lines still name the right app.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Upstream } from '../router.js';
import type { ValidatedRoute } from '../validate.js';
import { SERVER_OPTIONS, slotBackend, type HaproxyServer } from './config.js';
import { expectAnswer, runtimeCommand } from './runtime-api.js';
import type { RouterState } from './router-state.js';
import { runningServers } from './stats.js';

interface SlotState {
  appId: string;
  servers: HaproxyServer[];
}

/** A server taken out of its backend by a change: put in maintenance once the maps point elsewhere. */
export interface RetiredServer {
  slot: number;
  server: HaproxyServer;
}

/** A table's routes by app: each upstream once, and whether any of its hosts forces HTTPS. */
export function routesByApp(routes: readonly ValidatedRoute[]): Map<string, { upstreams: Upstream[]; forceHttps: boolean }> {
  const byApp = new Map<string, { upstreams: Upstream[]; forceHttps: boolean }>();
  for (const route of routes) {
    const entry = byApp.get(route.appId) ?? { upstreams: [], forceHttps: false };
    for (const upstream of route.upstreams) {
      if (!entry.upstreams.some((u) => u.address === upstream.address && u.port === upstream.port)) entry.upstreams.push(upstream);
    }
    entry.forceHttps ||= route.forceHttps;
    byApp.set(route.appId, entry);
  }
  return byApp;
}

type TableState = Pick<RouterState, 'slots' | 'backends' | 'assigned' | 'freeSlots' | 'nextServer'>;

export class BackendTable {
  /** Backends in the configuration. */
  slots: number;
  private readonly slotOf = new Map<string, number>();
  private readonly slotState = new Map<number, SlotState>();
  /** Slots released, with when: reused only after a minute so late access log lines still name the right app. */
  private freeSlots: Array<{ slot: number; since: number }> = [];
  private nextServer = 0;
  private readonly deleting = new Set<Promise<void>>();

  /** `isRunning`: whether a supervisor is there to talk to (a deletion waiting for idle gives up when not). */
  constructor(
    private readonly adminSocket: string,
    private readonly initialSlots: number,
    private readonly drainTimeoutSeconds: number,
    private readonly isRunning: () => boolean,
  ) {
    this.slots = initialSlots;
  }

  /** Back to what the constructor made (deletions under way go on). */
  reset(): void {
    this.slots = this.initialSlots;
    this.slotOf.clear();
    this.slotState.clear();
    this.freeSlots = [];
    this.nextServer = 0;
  }

  load(state: TableState): void {
    this.slots = state.slots;
    for (const backend of state.backends) this.slotState.set(backend.slot, { appId: backend.appId, servers: backend.servers });
    for (const { appId, slot } of state.assigned) this.slotOf.set(appId, slot);
    this.freeSlots = state.freeSlots;
    this.nextServer = state.nextServer;
  }

  toState(): TableState {
    return {
      slots: this.slots,
      backends: [...this.slotState].map(([slot, state]) => ({ slot, appId: state.appId, servers: state.servers })),
      assigned: [...this.slotOf].map(([appId, slot]) => ({ appId, slot })),
      freeSlots: this.freeSlots,
      nextServer: this.nextServer,
    };
  }

  /** Each backend's servers now, as the configuration lists them. */
  serversBySlot(): Map<number, HaproxyServer[]> {
    return new Map([...this.slotState].map(([slot, state]) => [slot, state.servers]));
  }

  appCount(): number {
    return this.slotOf.size;
  }

  serverCount(): number {
    return [...this.slotOf.values()].reduce((n, slot) => n + (this.slotState.get(slot)?.servers.length ?? 0), 0);
  }

  appOfBackend(backend: string): string | undefined {
    const match = /^app(\d+)$/.exec(backend);
    return match ? this.slotState.get(Number(match[1]))?.appId : undefined;
  }

  /** The backend of an app given one by `updateServers`. */
  backendOf(appId: string): string {
    return slotBackend(this.slotOf.get(appId)!);
  }

  /** Resolves once every removed server has been deleted from HAProxy. */
  async settled(): Promise<void> {
    await Promise.all([...this.deleting]);
  }

  /** Apps no longer in the table give their backend back (their servers drain like any removed server). */
  async releaseGoneApps(present: Set<string>): Promise<void> {
    for (const [appId, slot] of [...this.slotOf]) {
      if (present.has(appId)) continue;
      const state = this.slotState.get(slot)!;
      for (const server of state.servers) {
        await runtimeCommand(this.adminSocket, `set server ${slotBackend(slot)}/${server.name} state maint`);
        this.deleteWhenIdle(slot, server);
      }
      state.servers = [];
      this.slotOf.delete(appId);
      this.freeSlots.push({ slot, since: Date.now() });
    }
  }

  /** Whether these apps outgrow the backends; if so, `slots` is doubled until they fit (the caller reloads). */
  grownFor(appIds: string[]): boolean {
    const needed = appIds.filter((id) => !this.slotOf.has(id)).length + this.slotOf.size + this.freeSlots.length;
    if (needed <= this.slots) return false;
    while (this.slots < needed) this.slots *= 2;
    return true;
  }

  /**
   * Gives the app its backend and adds (enabled) the upstreams it lacks; returns the servers no
   * longer wanted, still taking requests until `retire`.
   */
  async updateServers(appId: string, upstreams: readonly Upstream[]): Promise<RetiredServer[]> {
    const retired: RetiredServer[] = [];
    const slot = this.assignSlot(appId);
    const state = this.slotState.get(slot)!;
    const backend = slotBackend(slot);
    for (const upstream of upstreams) {
      if (state.servers.some((s) => s.address === upstream.address && s.port === upstream.port)) continue;
      const server: HaproxyServer = { name: `i${this.nextServer++}`, address: upstream.address, port: upstream.port };
      await expectAnswer(
        this.adminSocket,
        `add server ${backend}/${server.name} ${server.address}:${server.port} ${SERVER_OPTIONS}`,
        /New server registered/,
      );
      // Dynamic servers start in maintenance.
      await runtimeCommand(this.adminSocket, `enable server ${backend}/${server.name}`);
      state.servers.push(server);
    }
    for (const server of [...state.servers]) {
      if (upstreams.some((u) => u.address === server.address && u.port === server.port)) continue;
      state.servers = state.servers.filter((s) => s !== server);
      retired.push({ slot, server });
    }
    return retired;
  }

  /** Puts retired servers in maintenance and deletes them once idle. */
  async retire(retired: readonly RetiredServer[]): Promise<void> {
    for (const { slot, server } of retired) {
      await runtimeCommand(this.adminSocket, `set server ${slotBackend(slot)}/${server.name} state maint`);
      this.deleteWhenIdle(slot, server);
    }
  }

  /**
   * Brings HAProxy's servers in line with this table: servers it runs that the table does not
   * know are put in maintenance and deleted once idle, known ones enabled, missing ones added.
   */
  async reconcile(): Promise<void> {
    const socket = this.adminSocket;
    const running = runningServers(await runtimeCommand(socket, 'show servers state'));
    for (const server of running) {
      const slot = /^app(\d+)$/.exec(server.backend)?.[1];
      const number = /^i(\d+)$/.exec(server.name)?.[1];
      if (slot === undefined || number === undefined) continue;
      this.nextServer = Math.max(this.nextServer, Number(number) + 1);
      const known = this.slotState
        .get(Number(slot))
        ?.servers.some((s) => s.name === server.name && s.address === server.address && s.port === server.port);
      if (!known) {
        await runtimeCommand(socket, `set server ${server.backend}/${server.name} state maint`);
        this.deleteWhenIdle(Number(slot), { name: server.name, address: server.address, port: server.port });
      } else if (server.adminState !== 0) {
        await runtimeCommand(socket, `enable server ${server.backend}/${server.name}`);
      }
    }
    for (const [slot, state] of this.slotState) {
      for (const server of state.servers) {
        if (running.some((r) => r.backend === slotBackend(slot) && r.name === server.name)) continue;
        await expectAnswer(
          socket,
          `add server ${slotBackend(slot)}/${server.name} ${server.address}:${server.port} ${SERVER_OPTIONS}`,
          /New server registered/,
        );
        await runtimeCommand(socket, `enable server ${slotBackend(slot)}/${server.name}`);
      }
    }
  }

  private assignSlot(appId: string): number {
    const known = this.slotOf.get(appId);
    if (known !== undefined) return known;
    const used = new Set(this.slotOf.values());
    const pending = new Set(this.freeSlots.map((f) => f.slot));
    let slot = [...Array(this.slots).keys()].find((s) => !used.has(s) && !pending.has(s));
    if (slot === undefined) {
      const reusable = this.freeSlots.findIndex((f) => Date.now() - f.since > 60_000);
      const index = reusable >= 0 ? reusable : 0;
      slot = this.freeSlots.splice(index, 1)[0]!.slot;
    }
    this.slotOf.set(appId, slot);
    this.slotState.set(slot, { appId, servers: this.slotState.get(slot)?.servers ?? [] });
    return slot;
  }

  private deleteWhenIdle(slot: number, server: HaproxyServer): void {
    const name = `${slotBackend(slot)}/${server.name}`;
    const work = (async () => {
      const deadline = Date.now() + this.drainTimeoutSeconds * 1000;
      for (;;) {
        if (!this.isRunning()) return;
        const answer = await runtimeCommand(this.adminSocket, `del server ${name}`).catch((e: Error) => e.message);
        if (/Server deleted|No such server/i.test(answer)) return;
        if (Date.now() > deadline) await runtimeCommand(this.adminSocket, `shutdown sessions server ${name}`).catch(() => '');
        await sleep(250);
      }
    })();
    this.deleting.add(work);
    void work.finally(() => this.deleting.delete(work));
  }
}
