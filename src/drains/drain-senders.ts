import { type Agent as HttpAgent, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createConnection, type Socket } from 'node:net';
import { createSocket } from 'node:dgram';
import { hostname } from 'node:os';
import type { EgressGuard } from '../network/egress-guard.js';
import type { DrainRecord, DrainSender, DrainType } from './drain-types.js';
import { drainHost, drainPort } from './drain-target.js';
import { octetCounted, syslogMessage } from './syslog-format.js';

const TIMEOUT_MS = 10_000;
/** A UDP datagram larger than this is cut: receivers commonly take 8 KiB and IP fragments get lost. */
const MAX_DATAGRAM = 8 * 1024;

export interface Credentials {
  username: string | null;
  password: string | null;
}

/** The JSON object each line becomes for HTTP and Elasticsearch receivers. */
export function jsonRecord(record: DrainRecord): Record<string, unknown> {
  return {
    '@timestamp': record.time,
    app: record.app,
    app_id: record.app_id,
    instance: record.instance ?? null,
    stream: record.stream,
    message: record.line,
    ...(record.fields ?? {}),
  };
}

function post(url: URL, body: string, contentType: string, credentials: Credentials, agent: HttpAgent): Promise<void> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'content-type': contentType, 'content-length': Buffer.byteLength(body) };
    if (credentials.username !== null)
      headers.authorization = `Basic ${Buffer.from(`${credentials.username}:${credentials.password ?? ''}`).toString('base64')}`;
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
      url,
      { method: 'POST', headers, timeout: TIMEOUT_MS, agent },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (text.length < 64 * 1024) text += chunk;
        });
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status < 200 || status >= 300) return reject(new Error(`the receiver answered ${status}`));
          resolve(bulkErrors(text));
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
    req.on('error', reject);
    req.end(body);
  });

  /** Elasticsearch answers 200 with `"errors": true` when some documents were refused. */
  function bulkErrors(text: string): void {
    if (!url.pathname.endsWith('/_bulk')) return;
    try {
      if ((JSON.parse(text) as { errors?: boolean }).errors === true) throw new Error('Elasticsearch refused some documents');
    } catch (error) {
      if ((error as Error).message.startsWith('Elasticsearch')) throw error;
    }
  }
}

/**
 * One connection kept open per drain (HTTPS: one TLS handshake, not one per batch); the guard
 * checks the address of each new one (a name that resolves elsewhere by now: DNS rebinding).
 */
function agentFor(url: URL, guard: EgressGuard): HttpAgent {
  const options = { keepAlive: true, maxSockets: 1 };
  return url.protocol === 'https:' ? guard.httpsAgent(options) : guard.httpAgent(options);
}

/** HTTP: each batch one POST of newline-delimited JSON objects. */
function httpSender(url: URL, credentials: Credentials, guard: EgressGuard): DrainSender {
  const agent = agentFor(url, guard);
  return {
    send: (records) =>
      post(url, records.map((r) => JSON.stringify(jsonRecord(r))).join('\n') + '\n', 'application/x-ndjson', credentials, agent),
    close: () => agent.destroy(),
  };
}

/** Elasticsearch: `<url>/_bulk`, one index action per line, into `slipway-<app>-<day>`. */
function elasticSender(url: URL, credentials: Credentials, guard: EgressGuard): DrainSender {
  const bulk = new URL(url);
  bulk.pathname = `${bulk.pathname.replace(/\/+$/, '')}/_bulk`;
  const agent = agentFor(url, guard);
  return {
    send(records) {
      let body = '';
      for (const r of records) {
        const index = `slipway-${r.app.toLowerCase().replace(/[^a-z0-9_-]/g, '_')}-${r.time.slice(0, 10).replaceAll('-', '.')}`;
        body += `${JSON.stringify({ index: { _index: index } })}\n${JSON.stringify(jsonRecord(r))}\n`;
      }
      return post(bulk, body, 'application/x-ndjson', credentials, agent);
    },
    close: () => agent.destroy(),
  };
}

/** What a TCP syslog connection wrote in its last seconds is sent again on the next one if it broke. */
const RESEND_WINDOW_MS = 5_000;
const RESEND_MAX_CHUNKS = 64;

/**
 * TCP syslog: one connection kept open, messages with octet counting (RFC 6587). Syslog has no
 * acknowledgement: the kernel takes a batch even when the receiver just died. So what went out
 * in the last seconds of a connection that then broke is written again, first, on the next
 * one (at least once: the receiver may see those lines twice, never miss them for that).
 */
function tcpSyslogSender(url: URL, guard: EgressGuard): DrainSender {
  let socket: Socket | undefined;
  /** Batches written on the current (or the last, broken) connection, with when. */
  let recent: Array<{ at: number; text: string }> = [];
  let brokeAt: number | undefined;
  const host = hostname();
  const connect = () =>
    new Promise<Socket>((resolve, reject) => {
      // Each (re)connection is checked: the address a literal names, or what the name resolves to now.
      const s = createConnection(guard.connectOptions(drainHost(url), drainPort(url)));
      s.setTimeout(TIMEOUT_MS, () => s.destroy(new Error(`no connection within ${TIMEOUT_MS / 1000} s`)));
      s.once('connect', () => {
        s.setTimeout(0);
        s.setKeepAlive(true, 10_000);
        resolve(s);
      });
      s.once('error', reject);
      // The receiver closing its end means it is gone: the next batch opens a new connection.
      s.on('end', () => s.destroy());
      s.on('close', () => {
        if (socket !== s) return;
        socket = undefined;
        brokeAt = Date.now();
      });
      s.on('data', () => {});
    });
  const write = (s: Socket, text: string) =>
    new Promise<void>((resolve, reject) => {
      s.write(text, (error) => (error ? reject(error) : resolve()));
    });
  return {
    async send(records) {
      const text = records.map((r) => octetCounted(syslogMessage(r, host))).join('');
      if (!socket || socket.destroyed) {
        const since = (brokeAt ?? Date.now()) - RESEND_WINDOW_MS;
        const again = recent.filter((c) => c.at >= since);
        const s = await connect();
        s.on('error', () => {});
        socket = s;
        brokeAt = undefined;
        // Kept as sent on this connection: should it break too, they go out again on the next.
        recent = again.map((c) => ({ at: Date.now(), text: c.text }));
        for (const chunk of again) await write(s, chunk.text);
      }
      const s = socket;
      await write(s, text);
      if (s.destroyed) throw new Error('the receiver closed the connection');
      const now = Date.now();
      recent.push({ at: now, text });
      while (recent.length > RESEND_MAX_CHUNKS || (recent[0] && recent[0].at < now - RESEND_WINDOW_MS)) recent.shift();
    },
    close() {
      socket?.destroy();
    },
  };
}

/** UDP syslog: one datagram per message; UDP tells nothing of what arrives. */
function udpSyslogSender(url: URL, guard: EgressGuard): DrainSender {
  const host = hostname();
  const address = drainHost(url);
  const port = drainPort(url);
  const socket = createSocket({ type: address.includes(':') ? 'udp6' : 'udp4' });
  socket.on('error', () => {});
  socket.unref();
  return {
    async send(records) {
      // Each batch goes to an address checked for it (the name may resolve elsewhere by now).
      const family = address.includes(':') ? 6 : 4;
      const checked = (await guard.resolve(address, port)).find((a) => a.family === family);
      if (!checked) throw new Error(`${address} has no IPv${family} address`);
      for (const r of records) {
        const message = Buffer.from(syslogMessage(r, host)).subarray(0, MAX_DATAGRAM);
        await new Promise<void>((resolve, reject) =>
          socket.send(message, port, checked.address, (error) => (error ? reject(error) : resolve())),
        );
      }
    },
    close() {
      socket.close();
    },
  };
}

export function makeSender(type: DrainType, url: URL, credentials: Credentials, guard: EgressGuard): DrainSender {
  switch (type) {
    case 'HTTP':
      return httpSender(url, credentials, guard);
    case 'ElasticSearch':
      return elasticSender(url, credentials, guard);
    case 'TCPSyslog':
      return tcpSyslogSender(url, guard);
    case 'UDPSyslog':
      return udpSyslogSender(url, guard);
  }
}
