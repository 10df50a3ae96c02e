import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { EgressGuard } from '../network/egress-guard.js';
import { hostOf, portOf } from './notification-urls.js';

export interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  /** What went wrong, in words that hold no secret (never the URL's password nor the payload). */
  error: string | null;
}

const TIMEOUT_MS = 10_000;

/** POSTs one signed JSON payload; 2xx is delivered, anything else is a failed attempt. */
export function postWebhook(rawUrl: string, body: string, headers: Record<string, string>, guard: EgressGuard): Promise<AttemptOutcome> {
  return new Promise((resolve) => {
    const url = new URL(rawUrl);
    // Checked at each delivery, not only when the webhook was added: a name may resolve
    // elsewhere by now (DNS rebinding), and the request connects to the address checked.
    let target: ReturnType<EgressGuard['connectOptions']>;
    try {
      target = guard.connectOptions(hostOf(url), portOf(url));
    } catch (error) {
      return resolve({ ok: false, statusCode: null, error: `refused: ${(error as Error).message}` });
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const auth = url.username ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined;
    const req = send(
      {
        ...target,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        auth,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
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
    req.on('error', (error: NodeJS.ErrnoException) => {
      const refused = error.code === 'EGRESS_REFUSED';
      const what = refused ? 'refused: ' : error.code ? `${error.code}: ` : '';
      resolve({ ok: false, statusCode: null, error: what + error.message.replaceAll(rawUrl, '') });
    });
    req.end(body);
  });
}
