/**
 * An instance backend that runs no process: each instance is an HTTP server inside the test's own
 * process, on 127.0.0.1 and a port of its own, answering as the test says. It needs no root, no
 * runc and no namespace, so the deploy logic above the backend (health check, switch, drain,
 * queue, restore, scale) can be tested in milliseconds. What it cannot show (a real process, its
 * user, its environment, signals) is what the contract suite's skip list names for it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Instance, InstanceBackend, InstanceSpec, InstanceState } from '../../../src/instances/backend.js';

/** How a fake app behaves; decided per instance from its spec. */
export interface FakeApp {
  /** The status a path answers (default 200 everywhere), maybe depending on the instance. */
  status?(path: string, spec: InstanceSpec): number;
  /** Time before the app answers at all. */
  bootMs?: number;
  /** `start()` fails, as when a beforeStart command exits non-zero. */
  failStart?: string;
}

/** What happened, in order, across the backend and the fake router: tests assert on the sequence. */
export type EventLog = string[];

export class FakeInstance implements Instance {
  readonly address = '127.0.0.1';
  port = 0;
  private current: InstanceState = 'starting';
  private restartCount = 0;
  private readonly server: http.Server;
  private answering = false;
  /** Every path requested, health checks included. */
  readonly requests: string[] = [];

  constructor(
    readonly spec: InstanceSpec,
    private readonly app: FakeApp,
    private readonly events: EventLog,
    private readonly onGone: (instance: FakeInstance) => void,
  ) {
    this.server = http.createServer((req, res) => {
      const path = req.url ?? '/';
      this.requests.push(path);
      const health = req.headers['user-agent'] === 'slipway-health-check';
      this.events.push(`${health ? 'health-check' : 'request'} ${this.id} ${path}`);
      if (!this.answering) {
        req.socket.destroy();
        return;
      }
      res.statusCode = this.app.status?.(path, this.spec) ?? 200;
      res.end(`${this.id}\n`);
    });
  }

  get id(): string {
    return this.spec.instanceId;
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    this.setState('running');
    this.spec.onLog('system', `started (fake instance on port ${this.port})`);
    setTimeout(() => (this.answering = true), this.app.bootMs ?? 0).unref();
  }

  state(): InstanceState {
    return this.current;
  }

  restarts(): number {
    return this.restartCount;
  }

  memoryUsage(): number | undefined {
    return this.current === 'running' ? 1024 * 1024 : undefined;
  }

  /** The app exits: the backend restarts it after `downMs`, as the real one does after a crash. */
  crash(downMs = 50): void {
    this.answering = false;
    this.setState('crashed');
    this.spec.onLog('system', 'crashed (exit code 1); restarting');
    setTimeout(() => {
      if (this.current !== 'crashed') return;
      this.restartCount++;
      this.answering = true;
      this.setState('running');
    }, downMs).unref();
  }

  async stop(graceMs = 10_000): Promise<void> {
    if (this.current === 'stopped') return;
    this.events.push(`stop ${this.id}`);
    this.setState('stopping');
    this.spec.onLog('system', `stopping (grace ${graceMs} ms)`);
    this.answering = false;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.setState('stopped');
    this.spec.onLog('system', 'stopped');
    this.onGone(this);
  }

  private setState(state: InstanceState): void {
    this.current = state;
    this.spec.onStateChange?.(state);
  }
}

export class FakeInstanceBackend implements InstanceBackend {
  private readonly live = new Set<FakeInstance>();
  /** Every instance ever started, in order (stopped ones included). */
  readonly started: FakeInstance[] = [];

  constructor(
    /** Chooses how each instance behaves, e.g. by its release folder or its environment. */
    private readonly appFor: (spec: InstanceSpec) => FakeApp = () => ({}),
    readonly events: EventLog = [],
  ) {}

  async start(spec: InstanceSpec): Promise<Instance> {
    const app = this.appFor(spec);
    this.events.push(`start ${spec.instanceId} ${spec.deploymentId}`);
    if (app.failStart) {
      spec.onLog('system', app.failStart);
      throw new Error(app.failStart);
    }
    const instance = new FakeInstance(spec, app, this.events, (gone) => this.live.delete(gone));
    await instance.listen();
    this.live.add(instance);
    this.started.push(instance);
    return instance;
  }

  list(): Instance[] {
    return [...this.live];
  }

  async stopAll(graceMs?: number): Promise<void> {
    await Promise.all([...this.live].map((i) => i.stop(graceMs)));
  }

  /** Its instances live in the test's process: letting go forgets them, they go on serving. */
  async detach(): Promise<void> {
    this.live.clear();
  }

  /** Nothing outlives the test's process: no instance of an earlier daemon to adopt. */
  async adoptAll(): Promise<Instance[]> {
    return [];
  }
}
