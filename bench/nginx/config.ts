/**
 * Renders the complete nginx configuration for one routing table: a pure function, so
 * the exact text is testable and the same table always gives the same file.
 *
 * Layout: one listener on listenHost:port. A default server answers unknown hosts with
 * 404; one server per known host either proxies to an upstream block (with a keep-alive
 * pool) or answers 503. A second server on a unix socket inside workDir answers the
 * configuration's generation number, so apply() can tell when the new config is live
 * without exposing anything on the network.
 */
import { join } from 'node:path';
import { nginxQuoted, noInstancePage, unknownHostPage, upstreamFailedPage } from '../../src/router/pages.js';
import type { ValidatedRoute } from '../../src/router/validate.js';
import { validateIPv4, validatePort } from '../../src/router/validate.js';

export interface NginxConfigInput {
  /** Absolute directory holding config, pid, logs, temp files and the control socket. */
  workDir: string;
  listenHost: string;
  port: number;
  generation: number;
  routes: readonly ValidatedRoute[];
  /** Worker user when the master runs as root; omitted otherwise (nginx cannot switch). */
  workerUser?: string;
  /** How long old workers may keep serving in-flight requests after a reload or stop. */
  drainTimeoutSeconds: number;
  /** Idle upstream connections each worker keeps per app. */
  keepaliveConnections?: number;
}

export interface NginxPaths {
  config: string;
  pid: string;
  errorLog: string;
  accessLog: string;
  controlSocket: string;
  tempRoot: string;
}

export function nginxPaths(workDir: string): NginxPaths {
  return {
    config: join(workDir, 'nginx.conf'),
    pid: join(workDir, 'nginx.pid'),
    errorLog: join(workDir, 'logs', 'error.log'),
    accessLog: join(workDir, 'logs', 'access.log'),
    controlSocket: join(workDir, 'control.sock'),
    tempRoot: join(workDir, 'tmp'),
  };
}

/** Paths are written unquoted into the config, so they are held to a plain character set. */
export function validateWorkDir(workDir: string): string {
  if (!workDir.startsWith('/') || !/^[A-Za-z0-9._/+-]+$/.test(workDir) || workDir.split('/').includes('..')) {
    throw new Error(
      `Router work directory ${JSON.stringify(workDir)} must be an absolute path of letters, digits and . _ / + - ` +
        "(it is written into nginx's configuration). Choose a plain path such as /var/lib/slipway/router.",
    );
  }
  // A unix socket path is limited to 107 bytes by the kernel (sun_path).
  const socket = nginxPaths(workDir).controlSocket;
  if (Buffer.byteLength(socket) > 107) {
    throw new Error(
      `Router work directory ${workDir} is too deep: the control socket path ${socket} exceeds the 107-byte unix socket limit. Use a shorter path.`,
    );
  }
  return workDir;
}

export function validateWorkerUser(user: string): string {
  if (!/^[a-z_][a-z0-9_-]{0,31}$/.test(user)) {
    throw new Error(`nginx worker user ${JSON.stringify(user)} is not a plain user name. Use an existing system user such as "www-data".`);
  }
  return user;
}

function upstreamName(index: number): string {
  return `slipway_app_${index}`;
}

function proxyLocation(upstream: string): string[] {
  return [
    '    location / {',
    `      proxy_pass http://${upstream};`,
    '      proxy_http_version 1.1;',
    // Upgrade requests get "Connection: upgrade"; all others an empty Connection header,
    // which is what lets nginx keep the upstream connection in the keep-alive pool.
    '      proxy_set_header Connection $slipway_connection;',
    '      proxy_set_header Upgrade $http_upgrade;',
    '      proxy_set_header Host $http_host;',
    '      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
    '      proxy_set_header X-Forwarded-Proto $scheme;',
    '      proxy_set_header X-Forwarded-Host $host;',
    '      proxy_set_header X-Forwarded-Port $server_port;',
    '      proxy_set_header X-Request-Id $slipway_request_id;',
    '      error_page 502 @slipway_502;',
    '      error_page 504 @slipway_504;',
    '    }',
    '    location @slipway_502 {',
    `      return 502 ${nginxQuoted(upstreamFailedPage(502))};`,
    '    }',
    '    location @slipway_504 {',
    `      return 504 ${nginxQuoted(upstreamFailedPage(504))};`,
    '    }',
  ];
}

export function renderNginxConfig(input: NginxConfigInput): string {
  const workDir = validateWorkDir(input.workDir);
  const listenHost = validateIPv4(input.listenHost, 'Router listen address');
  const port = validatePort(input.port, 'Router port');
  if (!Number.isSafeInteger(input.generation) || input.generation < 0) {
    throw new Error(`Router generation must be a non-negative integer, got ${input.generation}.`);
  }
  if (!Number.isInteger(input.drainTimeoutSeconds) || input.drainTimeoutSeconds < 1) {
    throw new Error(`Router drain timeout must be a whole number of seconds >= 1, got ${input.drainTimeoutSeconds}.`);
  }
  const keepalive = input.keepaliveConnections ?? 32;
  if (!Number.isInteger(keepalive) || keepalive < 1 || keepalive > 10000) {
    throw new Error(`Router keep-alive pool size must be an integer from 1 to 10000, got ${keepalive}.`);
  }
  const paths = nginxPaths(workDir);
  const listen = `${listenHost}:${port}`;
  const lines: string[] = [
    `# slipway router, generation ${input.generation}. Rewritten on every routing change: do not edit.`,
    ...(input.workerUser ? [`user ${validateWorkerUser(input.workerUser)};`] : []),
    'worker_processes auto;',
    'worker_rlimit_nofile 65536;',
    // The master stays in the foreground as slipway's child, so it dies with slipway.
    'daemon off;',
    `pid ${paths.pid};`,
    `error_log ${paths.errorLog} warn;`,
    // Old workers finish in-flight requests after a reload (drain), but not forever.
    `worker_shutdown_timeout ${input.drainTimeoutSeconds}s;`,
    'events {',
    '  worker_connections 8192;',
    '}',
    'http {',
    '  server_tokens off;',
    // Only nginx's own pages use this type; proxied responses keep the app's Content-Type
    // untouched (no `charset` directive, which would rewrite them).
    '  default_type "text/html; charset=utf-8";',
    '  types_hash_max_size 2048;',
    '  server_names_hash_max_size 8192;',
    '  server_names_hash_bucket_size 128;',
    `  client_body_temp_path ${paths.tempRoot}/body;`,
    `  proxy_temp_path ${paths.tempRoot}/proxy;`,
    `  fastcgi_temp_path ${paths.tempRoot}/fastcgi;`,
    `  uwsgi_temp_path ${paths.tempRoot}/uwsgi;`,
    `  scgi_temp_path ${paths.tempRoot}/scgi;`,
    '  log_format slipway \'$remote_addr [$time_iso8601] "$host" "$request" $status $body_bytes_sent \'',
    "                     '$request_time $upstream_addr $upstream_response_time $slipway_request_id';",
    // Buffered so logging does not cost a write per request.
    `  access_log ${paths.accessLog} slipway buffer=64k flush=1s;`,
    '  client_max_body_size 100m;',
    '  keepalive_timeout 75s;',
    '  keepalive_requests 10000;',
    '  proxy_connect_timeout 5s;',
    // Long polling, server-sent events and websockets stay open; an hour of silence ends them.
    '  proxy_read_timeout 3600s;',
    '  proxy_send_timeout 3600s;',
    '  proxy_buffering on;',
    '  proxy_buffers 16 16k;',
    '  proxy_busy_buffers_size 32k;',
    '  map $http_upgrade $slipway_connection {',
    '    default upgrade;',
    "    '' '';",
    '  }',
    // Keep a request id the client or an outer proxy already set; otherwise make one.
    '  map $http_x_request_id $slipway_request_id {',
    '    default $http_x_request_id;',
    "    '' $request_id;",
    '  }',
  ];

  input.routes.forEach((route, index) => {
    if (route.upstreams.length === 0) return;
    lines.push(`  upstream ${upstreamName(index)} {`);
    // Several instances of an app: each request goes to the one with the fewest in flight.
    lines.push('    least_conn;');
    for (const upstream of route.upstreams) {
      const address = validateIPv4(upstream.address, `Upstream address for "${route.host}"`);
      const upstreamPort = validatePort(upstream.port, `Upstream port for "${route.host}"`);
      lines.push(`    server ${address}:${upstreamPort} max_fails=1 fail_timeout=2s;`);
    }
    lines.push(
      `    keepalive ${keepalive};`,
      // Below Node's default 5 s server keep-alive, so nginx never reuses a connection
      // the app is about to close.
      '    keepalive_timeout 4s;',
      '    keepalive_requests 10000;',
      '  }',
    );
  });

  lines.push(
    '  server {',
    `    listen ${listen} default_server backlog=4096;`,
    '    server_name _;',
    '    location / {',
    `      return 404 ${nginxQuoted(unknownHostPage())};`,
    '    }',
    '  }',
  );

  input.routes.forEach((route, index) => {
    lines.push('  server {', `    listen ${listen};`, `    server_name ${route.host};`);
    if (route.forceHttps) {
      lines.push('    return 301 https://$host$request_uri;');
    } else if (route.upstreams.length === 0) {
      lines.push(
        '    location / {',
        '      add_header Retry-After 5 always;',
        '      add_header Cache-Control no-store always;',
        `      return 503 ${nginxQuoted(noInstancePage(route.host))};`,
        '    }',
      );
    } else {
      lines.push(...proxyLocation(upstreamName(index)));
    }
    lines.push('  }');
  });

  lines.push(
    '  server {',
    `    listen unix:${paths.controlSocket};`,
    '    access_log off;',
    '    location = /generation {',
    '      default_type text/plain;',
    `      return 200 "${input.generation}";`,
    '    }',
    '    location / {',
    '      return 404;',
    '    }',
    '  }',
    '}',
    '',
  );
  return lines.join('\n');
}
