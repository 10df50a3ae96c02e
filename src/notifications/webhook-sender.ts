import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { type AddressGuard, hostOf, portOf, refusalOf } from './address-guard.js';

export interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  /** What went wrong, in words that hold no secret (never the URL's password nor the payload). */
  error: string | null;
}

const TIMEOUT_MS = 10_000;

/**
 * The address is checked when the connection is made, not only when the webhook was added: a
 * name may later resolve to the sandboxes' subnet (DNS rebinding).
 */
function guardedLookup(guard: AddressGuard, port: number): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as unknown as LookupAddress[];
      for (const a of list) {
        const refusal = refusalOf(a.address, port, guard);
        if (refusal) return callback(new Error(`${hostname} resolves to ${a.address}: ${refusal}`), '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      const first = list[0]!;
      callback(null, first.address, first.family);
    });
  };
}

/** POSTs one signed JSON payload; 2xx is delivered, anything else is a failed attempt. */
export function postWebhook(rawUrl: string, body: string, headers: Record<string, string>, guard: AddressGuard): Promise<AttemptOutcome> {
  return new Promise((resolve) => {
    const url = new URL(rawUrl);
    const port = portOf(url);
    const host = hostOf(url);
    if (isIP(host)) {
      const refusal = refusalOf(host, port, guard);
      if (refusal) return resolve({ ok: false, statusCode: null, error: `refused: ${refusal}` });
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const auth = url.username ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined;
    const req = send(
      {
        host,
        port,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        auth,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
        lookup: guardedLookup(guard, port),
        timeout: TIMEOUT_MS,
        agent: false,
      },
      (res) => {
        // The status is the answer; the body is not read, so a receiver cannot make the daemon hold a large one.
        const status = res.statusCode ?? 0;
        const ok = status >= 200 && status < 300;
        res.destroy();
        resolve({ ok, statusCode: status, error: ok ? null : `the receiver answered ${status}` });
      },
    );
    // `timeout` is the socket's idle time; a receiver trickling bytes is cut by this deadline.
    const deadline = setTimeout(() => req.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)), TIMEOUT_MS);
    req.on('close', () => clearTimeout(deadline));
    req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
    req.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ ok: false, statusCode: null, error: (error.code ? `${error.code}: ` : '') + error.message.replaceAll(rawUrl, '') }),
    );
    req.end(body);
  });
}
