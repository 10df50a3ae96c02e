/**
 * A router engine inside the test's process: a plain Node HTTP proxy on 127.0.0.1 that forwards
 * by Host to the table last applied, answers 404 for an unknown host and 503 for an app with no
 * upstream, and records every table it is given. No root, no nginx: the switch logic of the
 * platform can be tested against it, and it passes the router contract suite's HTTP part.
 * It serves no TLS (certificates are only recorded) and it does not drain: a request in flight
 * finishes because Node lets it, not because the engine waits for it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RouterOptions, Router, RoutingTable, TlsCertificate, Upstream } from '../../../src/router/router.js';
import type { EventLog } from './fake-instance-backend.js';

export class FakeRouter implements Router {
  private table: RoutingTable = new Map();
  private server: http.Server | undefined;
  private readonly agent = new http.Agent({ keepAlive: true });
  private turn = 0;
  /** Every table applied, in order. */
  readonly tables: RoutingTable[] = [];
  certificates: readonly TlsCertificate[] = [];
  /** Whether the daemon let go of it (it goes on serving). */
  detached = false;

  constructor(
    readonly events: EventLog = [],
    private readonly options: Pick<RouterOptions, 'onRequest'> = {},
  ) {}

  /** The port the proxy listens on, once started. */
  get port(): number {
    return (this.server?.address() as AddressInfo | null)?.port ?? 0;
  }

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => this.forward(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  async apply(table: RoutingTable): Promise<void> {
    this.table = new Map(table);
    this.tables.push(this.table);
    const hosts = [...table].map(([host, route]) => `${host}=[${route.upstreams.map(describe).join(',')}]`);
    this.events.push(`route ${hosts.join(' ')}`);
  }

  /** Holds as HaproxyRouter's, as events only: what a handover does, in order (src/serving/exclusive-handover.ts). */
  async hold(appId: string): Promise<void> {
    this.events.push(`hold ${appId}`);
  }

  async release(appId: string): Promise<void> {
    this.events.push(`release ${appId}`);
  }

  /** Apps asleep (scale to zero), and those a test's request waits for (`requestFor`). */
  readonly asleep = new Set<string>();
  private readonly waiting = new Set<string>();

  async sleep(appId: string): Promise<void> {
    this.events.push(`sleep ${appId}`);
    this.asleep.add(appId);
  }

  async wake(appId: string): Promise<void> {
    this.events.push(`wake ${appId}`);
    this.asleep.delete(appId);
    this.waiting.delete(appId);
  }

  /** A request for the app arrives while it sleeps: HaproxyRouter's hold action marks it so. */
  requestFor(appId: string): void {
    if (this.asleep.has(appId)) this.waiting.add(appId);
  }

  async wakeRequests(): Promise<Set<string>> {
    return new Set([...this.waiting].filter((id) => this.asleep.has(id)));
  }

  /** Requests are answered at once here: nothing is ever in flight when asked. */
  async appConnections(): Promise<Map<string, number>> {
    return new Map();
  }

  async applyCertificates(certs: readonly TlsCertificate[]): Promise<void> {
    this.certificates = certs;
  }

  async detach(): Promise<void> {
    this.detached = true;
  }

  async stop(): Promise<void> {
    this.agent.destroy();
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = undefined;
  }

  /** The upstreams a host is routed to now. */
  upstreamsOf(host: string): readonly Upstream[] | undefined {
    return this.table.get(host)?.upstreams;
  }

  private forward(req: http.IncomingMessage, res: http.ServerResponse): void {
    const started = Date.now();
    const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    const route = this.table.get(host);
    if (!route) return this.page(res, 404, `No application answers at ${host}.`);
    if (route.upstreams.length === 0) return this.page(res, 503, `${host} has no running instance.`);
    const upstream = route.upstreams[this.turn++ % route.upstreams.length]!;
    const proxied = http.request(
      { host: upstream.address, port: upstream.port, method: req.method, path: req.url, headers: req.headers, agent: this.agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        answer.on('end', () =>
          this.options.onRequest?.({
            time: new Date(started),
            appId: route.appId,
            host,
            client: req.socket.remoteAddress ?? '',
            method: req.method ?? 'GET',
            path: req.url ?? '/',
            status: answer.statusCode ?? 502,
            bytes: Number(answer.headers['content-length'] ?? 0),
            durationMs: Date.now() - started,
            instance: describe(upstream),
            tls: false,
          }),
        );
      },
    );
    proxied.on('error', () => this.page(res, 502, `The instance of ${host} did not answer.`));
    req.pipe(proxied);
  }

  private page(res: http.ServerResponse, status: number, text: string): void {
    if (res.headersSent) return void res.destroy();
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(`${text}\n`);
  }
}

function describe(u: Upstream): string {
  return `${u.address}:${u.port}`;
}
