import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { createConnection, isIP, type Socket } from 'node:net';
import { createSocket, type SocketOptions } from 'node:dgram';
import { hostname } from 'node:os';
import type { DrainRecord, DrainSender, DrainType } from './drain-types.js';
import { forbiddenReason, guardedLookup, type ForbiddenTargets } from './drain-target.js';
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

function post(
  url: URL,
  body: string,
  contentType: string,
  credentials: Credentials,
  forbidden: ForbiddenTargets,
  agent: HttpAgent,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'content-type': contentType, 'content-length': Buffer.byteLength(body) };
    if (credentials.username !== null)
      headers.authorization = `Basic ${Buffer.from(`${credentials.username}:${credentials.password ?? ''}`).toString('base64')}`;
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const lookup = guardedLookup(forbidden, port);
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
      url,
      { method: 'POST', headers, timeout: TIMEOUT_MS, lookup, agent },
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

/** HTTP: each batch one POST of newline-delimited JSON objects. */
/** One connection kept open per drain (HTTPS: one TLS handshake, not one per batch). */
function agentFor(url: URL): HttpAgent {
  return url.protocol === 'https:' ? new HttpsAgent({ keepAlive: true, maxSockets: 1 }) : new HttpAgent({ keepAlive: true, maxSockets: 1 });
}

function httpSender(url: URL, credentials: Credentials, forbidden: ForbiddenTargets): DrainSender {
  const agent = agentFor(url);
  return {
    send: (records) =>
      post(url, records.map((r) => JSON.stringify(jsonRecord(r))).join('\n') + '\n', 'application/x-ndjson', credentials, forbidden, agent),
    close: () => agent.destroy(),
  };
}

/** Elasticsearch: `<url>/_bulk`, one index action per line, into `slipway-<app>-<day>`. */
function elasticSender(url: URL, credentials: Credentials, forbidden: ForbiddenTargets): DrainSender {
  const bulk = new URL(url);
  bulk.pathname = `${bulk.pathname.replace(/\/+$/, '')}/_bulk`;
  const agent = agentFor(url);
  return {
    send(records) {
      let body = '';
      for (const r of records) {
        const index = `slipway-${r.app.toLowerCase().replace(/[^a-z0-9_-]/g, '_')}-${r.time.slice(0, 10).replaceAll('-', '.')}`;
        body += `${JSON.stringify({ index: { _index: index } })}\n${JSON.stringify(jsonRecord(r))}\n`;
      }
      return post(bulk, body, 'application/x-ndjson', credentials, forbidden, agent);
    },
    close: () => agent.destroy(),
  };
}

/**
 * TCP syslog: one connection kept open, messages with octet counting (RFC 6587). A batch is
 * delivered once the kernel took it; a broken connection is opened again for the next batch.
 */
function tcpSyslogSender(url: URL, forbidden: ForbiddenTargets): DrainSender {
  let socket: Socket | undefined;
  const host = hostname();
  const connect = () =>
    new Promise<Socket>((resolve, reject) => {
      const port = Number(url.port || 514);
      const s = createConnection({ host: url.hostname.replace(/^\[|\]$/g, ''), port, lookup: guardedLookup(forbidden, port) });
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
        if (socket === s) socket = undefined;
      });
      s.on('data', () => {});
    });
  return {
    async send(records) {
      if (!socket || socket.destroyed) {
        socket = await connect();
        socket.on('error', () => {});
      }
      const s = socket;
      const text = records.map((r) => octetCounted(syslogMessage(r, host))).join('');
      await new Promise<void>((resolve, reject) => {
        s.write(text, (error) => (error ? reject(error) : resolve()));
      });
      if (s.destroyed) throw new Error('the receiver closed the connection');
    },
    close() {
      socket?.destroy();
    },
  };
}

/** UDP syslog: one datagram per message; UDP tells nothing of what arrives. */
function udpSyslogSender(url: URL, forbidden: ForbiddenTargets): DrainSender {
  const host = hostname();
  const address = url.hostname.replace(/^\[|\]$/g, '');
  const socket = createSocket({
    type: address.includes(':') ? 'udp6' : 'udp4',
    lookup: guardedLookup(forbidden, Number(url.port || 514)) as unknown as SocketOptions['lookup'],
  });
  socket.on('error', () => {});
  socket.unref();
  return {
    async send(records) {
      for (const r of records) {
        const message = Buffer.from(syslogMessage(r, host)).subarray(0, MAX_DATAGRAM);
        await new Promise<void>((resolve, reject) =>
          socket.send(message, Number(url.port || 514), address, (error) => (error ? reject(error) : resolve())),
        );
      }
    },
    close() {
      socket.close();
    },
  };
}

export function makeSender(type: DrainType, url: URL, credentials: Credentials, forbidden: ForbiddenTargets): DrainSender {
  const sender = typedSender(type, url, credentials, forbidden);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!isIP(host)) return sender;
  // An address is not looked up: it is checked before each batch (slipway's ports may have changed since).
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : url.protocol === 'http:' ? 80 : 514));
  return {
    send(records) {
      const reason = forbiddenReason(host, port, forbidden);
      return reason ? Promise.reject(new Error(reason)) : sender.send(records);
    },
    close: () => sender.close(),
  };
}

function typedSender(type: DrainType, url: URL, credentials: Credentials, forbidden: ForbiddenTargets): DrainSender {
  switch (type) {
    case 'HTTP':
      return httpSender(url, credentials, forbidden);
    case 'ElasticSearch':
      return elasticSender(url, credentials, forbidden);
    case 'TCPSyslog':
      return tcpSyslogSender(url, forbidden);
    case 'UDPSyslog':
      return udpSyslogSender(url, forbidden);
  }
}
