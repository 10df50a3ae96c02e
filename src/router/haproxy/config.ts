/**
 * Renders HAProxy's configuration: a pure function of its input, so the text is testable.
 *
 * Nothing app-specific changes this file on a routing change: hosts reach a backend through
 * map files changed at runtime, and each app owns one of `slots` identical backends whose
 * servers are added and removed at runtime. The file is rewritten (and HAProxy reloaded) only
 * when the apps outgrow the slots; then the servers running at that moment are written in, so
 * the reloaded process starts with the same routing.
 */
import { join } from 'node:path';
import type { Upstream } from '../router.js';
import { validateCidr, validateIPv4, validatePort } from '../validate.js';

export interface HaproxyServer extends Upstream {
  /** Unique for the router's lifetime (`i<n>`), so a server being deleted never clashes with a new one. */
  name: string;
}

export interface HaproxyConfigInput {
  workDir: string;
  listenHost: string;
  port: number;
  /** 0: no HTTPS listener. */
  httpsPort: number;
  trustedProxies: readonly string[];
  acmeChallenge?: Upstream;
  /** Whether HAProxy writes the access log on its fd 3 (a pipe the daemon reads, see access-log.ts). */
  accessLog?: boolean;
  /** Number of app backends (`app0`...). */
  slots: number;
  /** Servers per backend slot at the time of rendering. */
  servers: ReadonlyMap<number, readonly HaproxyServer[]>;
  /** How long a stopping process may finish what it serves. */
  drainTimeoutSeconds: number;
  /** Run workers as this user (when started as root). */
  user?: string;
  /** Worker threads (see routerThreads). */
  threads: number;
  /**
   * Whether requests can be held (the hold action and its map). False only for a router adopted
   * from a version without holds, until a hold is first asked for: rendering them would force a
   * reload at the upgrade, which HTTP/2 clients see as a GOAWAY.
   */
  holds?: boolean;
}

/**
 * Half the machine's cores, at least one: the router shares the machine with the apps it
 * serves. On 2 cores one thread costs 19 µs of CPU per small request where two cost 26 (they
 * share the queues and the pools, and each wakes the other), and serves more requests a second.
 */
export function routerThreads(cores: number): number {
  return Math.max(1, Math.floor(cores / 2));
}

export interface HaproxyPaths {
  config: string;
  adminSocket: string;
  hostsMap: string;
  wildcardMap: string;
  forceHttpsMap: string;
  /** Backends whose requests are held (backend -> 1): hold.lua keeps them until the entry goes. */
  holdMap: string;
  holdScript: string;
  certList: string;
  certDir: string;
  defaultCert: string;
  pagesDir: string;
  /** The access log's FIFO, held open by the supervisor (HAProxy's fd 3) and read by the daemon. */
  accessPipe: string;
  /** The router's state for the next daemon (router-state.ts). */
  state: string;
  /** The supervisor's pid and start time (supervisor-files.ts). */
  holderPid: string;
  /** HAProxy master's pid, rewritten at each of its starts. */
  haproxyPid: string;
  /** What the supervisor and HAProxy print. */
  holderLog: string;
  /** One JSON line per death of HAProxy, appended by the supervisor (supervisor-files.ts). */
  exits: string;
}

export function haproxyPaths(workDir: string): HaproxyPaths {
  return {
    config: join(workDir, 'haproxy.cfg'),
    adminSocket: join(workDir, 'admin.sock'),
    hostsMap: join(workDir, 'hosts.map'),
    wildcardMap: join(workDir, 'wildcards.map'),
    forceHttpsMap: join(workDir, 'force-https.map'),
    holdMap: join(workDir, 'hold.map'),
    holdScript: join(workDir, 'hold.lua'),
    certList: join(workDir, 'certificates.list'),
    certDir: join(workDir, 'certs'),
    defaultCert: join(workDir, 'default.pem'),
    pagesDir: join(workDir, 'pages'),
    accessPipe: join(workDir, 'access-log.pipe'),
    state: join(workDir, 'state.json'),
    holderPid: join(workDir, 'supervisor.pid'),
    haproxyPid: join(workDir, 'haproxy.pid'),
    holderLog: join(workDir, 'supervisor.log'),
    exits: join(workDir, 'exits.jsonl'),
  };
}

/**
 * `pool-max-conn -1`: servers added at runtime keep no idle connection by default (0), so
 * every request opened a new connection to the app (a fifth of the throughput); unlimited is
 * what servers written in the file get. `pool-purge-delay 2s` is below Node's 5 s server
 * keep-alive, so HAProxy drops idle upstream connections before the app closes them.
 */
export const SERVER_OPTIONS = 'pool-purge-delay 2s pool-max-conn -1';

export const slotBackend = (slot: number) => `app${slot}`;

/** One line of the access log: space-separated, the host last (see access-log.ts). */
export const ACCESS_LOG_FORMAT = '%b %Ts.%ms %ci %HM %HU %ST %B %Ta %si:%sp %[ssl_fc] %[var(txn.host)]';

/** Paths go into the file unquoted: the same plain character set as nginx's work directory. */
function plainPath(path: string): string {
  if (!/^\/[A-Za-z0-9._/+-]+$/.test(path) || path.split('/').includes('..')) {
    throw new Error(`Router work directory path ${JSON.stringify(path)} must be absolute and made of letters, digits and . _ / + -.`);
  }
  return path;
}

function forwardedHeaderRules(proto: 'http' | 'https', port: number): string[] {
  // A trusted proxy's values stand (it saw the client); from anyone else they are the client's
  // invention. `set-header` replaces every copy, so one rule per header does both, and the
  // condition reads the header only for a trusted source: three rules fewer per request than
  // deleting and setting apart.
  const unlessTrustedAndSent = (header: string) => `unless trusted_proxy { req.hdr(${header}) -m found }`;
  return [
    ...['X-Forwarded-For', 'Forwarded'].map((header) => `  http-request del-header ${header} unless trusted_proxy`),
    `  http-request set-header X-Forwarded-Proto ${proto} ${unlessTrustedAndSent('x-forwarded-proto')}`,
    `  http-request set-header X-Forwarded-Host %[req.hdr(host)] ${unlessTrustedAndSent('x-forwarded-host')}`,
    `  http-request set-header X-Forwarded-Port ${port} ${unlessTrustedAndSent('x-forwarded-port')}`,
    '  http-request set-header X-Request-Id %[unique-id] unless { req.hdr(x-request-id) -m found }',
    // X-Forwarded-For is extended: `option forwardfor` appends the peer's address to what is left.
    '  option forwardfor',
  ];
}

/**
 * A request the app took and then dropped without a word (a crash, or a keep-alive connection it
 * closed as the request arrived) is sent again only when repeating it is harmless (RFC 9110's
 * idempotent methods), as nginx does: a POST the app may have acted on is never replayed, so a
 * POST that crashes the app cannot take down one instance after another either. Connection
 * failures (nothing was sent) are retried for every method.
 */
const RETRY_ONLY_IDEMPOTENT = '  http-request disable-l7-retry unless { method GET HEAD OPTIONS PUT DELETE TRACE }';

function routingRules(paths: HaproxyPaths, holds: boolean): string[] {
  return [
    '  http-request set-var(txn.host) req.hdr(host),field(1,:),lower',
    `  http-request set-var(txn.backend) var(txn.host),map_str(${paths.hostsMap})`,
    // Wildcards are stored as ".example.com" (longest first): any deeper sub-domain without an exact entry.
    `  http-request set-var(txn.backend) var(txn.host),map_end(${paths.wildcardMap}) unless { var(txn.backend) -m found }`,
    // A held app's requests wait here (hold.lua) until the hold ends, then go on as usual.
    ...(holds ? [`  http-request lua.slipway_hold if { var(txn.backend),map_str(${paths.holdMap}) -m found }`] : []),
  ];
}

/** The longest a request is held: past it, it goes on to the app as if no hold were there. */
export const HOLD_MAX_SECONDS = 60;

/** The hold map's value for an app asleep (scale to zero); the action turns it into WAKE_VALUE. */
export const ASLEEP_VALUE = 'asleep';
/** What a request held for an app asleep writes in the hold map: the daemon reads it and wakes the app. */
export const WAKE_VALUE = 'wake';

/** The page of a request held past HOLD_MAX_SECONDS for an app that is still waking. */
const WAKING_PAGE =
  '<!doctype html><html><head><meta charset="utf-8"><title>Waking up</title></head><body>' +
  '<h1>This application is waking up</h1><p>It was asleep for lack of requests and is starting; ' +
  'it took longer than usual. Retry in a few seconds.</p></body></html>';

/**
 * The Lua action that holds a request while its backend is in the hold map (changed at runtime
 * through the admin socket): it looks every 25 ms, yielding, so a held request costs no thread.
 * A backend marked `asleep` (an app scaled to zero) is marked `wake` by its first held request:
 * the daemon reads the map every 250 ms while an app sleeps and starts it. Each look marks it
 * again, so a map the daemon rewrote meanwhile does not lose the wake. A request still held for
 * a sleeping app at the end gets a 503 page saying it wakes (its backend has no server yet).
 */
export function holdScript(holdMap: string): string {
  return [
    '-- Rendered by slipway: holds the requests of the apps in the hold map (src/router/haproxy/config.ts).',
    `local held = Map.new("${holdMap}", Map._str)`,
    'core.register_action("slipway_hold", { "http-req" }, function(txn)',
    '  local backend = txn:get_var("txn.backend") or ""',
    `  local deadline = core.now().sec + ${HOLD_MAX_SECONDS}`,
    '  local value = held:lookup(backend)',
    '  while core.now().sec < deadline do',
    '    value = held:lookup(backend)',
    '    if value == nil or value == "" then return end',
    `    if value == "${ASLEEP_VALUE}" then core.set_map("${holdMap}", backend, "${WAKE_VALUE}") end`,
    // A process a reload replaced no longer hears the map change: its held requests go on.
    // (The fetch answers 0 or 1, and 0 is true in Lua.)
    '    local stopping = txn.f:stopping()',
    '    if stopping == true or stopping == 1 then return end',
    '    core.msleep(25)',
    '  end',
    `  if value == "${ASLEEP_VALUE}" or value == "${WAKE_VALUE}" then`,
    '    local reply = txn:reply()',
    '    reply:set_status(503, "Service Unavailable")',
    '    reply:add_header("content-type", "text/html; charset=utf-8")',
    '    reply:add_header("retry-after", "5")',
    '    reply:add_header("cache-control", "no-store")',
    `    reply:set_body(${JSON.stringify(WAKING_PAGE)})`,
    '    txn:done(reply)',
    '  end',
    'end, 0)',
    '',
  ].join('\n');
}

export function renderHaproxyConfig(input: HaproxyConfigInput): string {
  const paths = haproxyPaths(plainPath(input.workDir));
  const listen = validateIPv4(input.listenHost, 'Router listen address');
  const port = validatePort(input.port, 'Router port');
  const httpsPort = input.httpsPort === 0 ? 0 : validatePort(input.httpsPort, 'Router HTTPS port');
  const trusted = input.trustedProxies.map((cidr) => validateCidr(cidr));
  const trustedAcl = trusted.length ? `  acl trusted_proxy src ${trusted.join(' ')}` : '  acl trusted_proxy always_false';
  const user = input.user && /^[a-z_][a-z0-9_-]{0,31}$/.test(input.user) ? input.user : undefined;
  const lines = [
    '# slipway router (HAProxy). Rendered by slipway: routes change at runtime, do not edit.',
    'global',
    `  stats socket ${paths.adminSocket} mode 600 level admin expose-fd listeners`,
    '  stats timeout 1m',
    ...(input.holds === false ? [] : [`  lua-load ${paths.holdScript}`]),
    ...(user ? [`  user ${user}`, `  group ${user}`] : []),
    // Within the 20000 descriptors a process may hold here (two per proxied connection).
    '  maxconn 9000',
    `  nbthread ${Number.isInteger(input.threads) && input.threads >= 1 ? input.threads : 1}`,
    `  hard-stop-after ${input.drainTimeoutSeconds}s`,
    '  ssl-default-bind-options ssl-min-ver TLSv1.2 no-tls-tickets',
    '  tune.ssl.default-dh-param 2048',
    // One writev per line on the pipe of fd 3; a line it has no room for is counted (DroppedLogs).
    ...(input.accessLog ? ['  log fd@3 len 8192 format raw local0 info'] : []),
    'defaults',
    '  mode http',
    ...(input.accessLog ? ['  log global', `  log-format "${ACCESS_LOG_FORMAT}"`] : []),
    '  option http-keep-alive',
    // A reload (rare: only when apps outgrow the backends) closes idle client connections after
    // their next response, with "Connection: close", instead of under the client's feet.
    '  option idle-close-on-response',
    '  option redispatch 1',
    // An upstream keep-alive connection the app closed just as it was reused is retried, not a 502
    // (only for requests that are safe to repeat: see RETRY_ONLY_IDEMPOTENT).
    '  retries 3',
    '  retry-on conn-failure empty-response',
    '  http-reuse safe',
    '  timeout connect 5s',
    '  timeout http-request 30s',
    '  timeout client 75s',
    '  timeout http-keep-alive 75s',
    '  timeout client-fin 5s',
    // Long polling, server-sent events and websockets stay open; an hour of silence ends them.
    '  timeout server 3600s',
    '  timeout tunnel 3600s',
    '  timeout queue 30s',
    // A random (version 4) UUID: unique across restarts and machines, where the connection's
    // addresses, ports, time and counters in hexadecimal were unique to one process (same CPU per
    // request within the noise, measured A/B).
    '  unique-id-format %[uuid()]',
    `  errorfile 502 ${join(paths.pagesDir, '502.http')}`,
    `  errorfile 503 ${join(paths.pagesDir, '503.http')}`,
    `  errorfile 504 ${join(paths.pagesDir, '504.http')}`,
    '',
    'frontend http',
    `  bind ${listen}:${port}`,
    trustedAcl,
    ...(input.acmeChallenge ? ['  acl acme_challenge path_beg /.well-known/acme-challenge/'] : []),
    ...routingRules(paths, input.holds !== false),
    ...(httpsPort
      ? [
          `  http-request redirect code 301 location https://%[var(txn.host)]${httpsPort === 443 ? '' : `:${httpsPort}`}%[url] ` +
            `if ${input.acmeChallenge ? '!acme_challenge ' : ''}{ var(txn.backend),map_str(${paths.forceHttpsMap}) -m str 1 }`,
        ]
      : []),
    ...forwardedHeaderRules('http', port),
    RETRY_ONLY_IDEMPOTENT,
    ...(input.acmeChallenge ? ['  use_backend acme if acme_challenge'] : []),
    '  use_backend %[var(txn.backend)] if { var(txn.backend) -m found }',
    '  default_backend unknown_host',
  ];
  if (httpsPort) {
    lines.push(
      '',
      'frontend https',
      `  bind ${listen}:${httpsPort} ssl crt-list ${paths.certList} alpn h2,http/1.1`,
      trustedAcl,
      ...routingRules(paths, input.holds !== false),
      ...forwardedHeaderRules('https', httpsPort),
      RETRY_ONLY_IDEMPOTENT,
      '  use_backend %[var(txn.backend)] if { var(txn.backend) -m found }',
      '  default_backend unknown_host',
    );
  }
  lines.push(
    '',
    'backend unknown_host',
    '  http-request set-log-level silent',
    `  http-request return status 404 content-type "text/html; charset=utf-8" file ${join(paths.pagesDir, '404.html')}`,
  );
  if (input.acmeChallenge) {
    const address = validateIPv4(input.acmeChallenge.address, 'ACME challenge address');
    lines.push(
      '',
      'backend acme',
      '  http-request set-log-level silent',
      `  server acme ${address}:${validatePort(input.acmeChallenge.port, 'ACME challenge port')}`,
    );
  }
  if (!Number.isInteger(input.slots) || input.slots < 1)
    throw new Error(`Router backend slots must be a positive integer, got ${input.slots}.`);
  for (let slot = 0; slot < input.slots; slot++) {
    lines.push('', `backend ${slotBackend(slot)}`, '  balance leastconn');
    for (const server of input.servers.get(slot) ?? []) {
      if (!/^i\d+$/.test(server.name)) throw new Error(`Router server name ${JSON.stringify(server.name)} is not i<number>.`);
      lines.push(`  server ${server.name} ${validateIPv4(server.address)}:${validatePort(server.port)} ${SERVER_OPTIONS}`);
    }
  }
  lines.push('');
  return lines.join('\n');
}
