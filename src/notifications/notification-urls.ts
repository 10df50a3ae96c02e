import { ValidationError } from '../core/errors.js';
import type { EgressGuard } from '../network/egress-guard.js';

/** The port a URL reaches, its default one when it names none. */
export function portOf(url: URL): number {
  if (url.port) return Number(url.port);
  return { 'http:': 80, 'https:': 443, 'smtp:': 587, 'smtps:': 465 }[url.protocol] ?? 0;
}

/** The URL's host without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** A URL as people may see it: any password in it hidden. */
export function shownUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '(invalid URL)';
  }
}

function parse(kind: string, raw: unknown, schemes: readonly string[]): URL {
  let url: URL | undefined;
  try {
    url = typeof raw === 'string' ? new URL(raw) : undefined;
  } catch {
    url = undefined;
  }
  if (!url) throw new ValidationError(`The ${kind} URL is not a URL.`, `Give a full URL such as ${schemes[0]}://host:port/path.`);
  if (!schemes.includes(url.protocol.slice(0, -1))) {
    throw new ValidationError(
      `A ${kind} URL must use ${schemes.join(' or ')}, not ${url.protocol.slice(0, -1)}.`,
      `Give a URL starting with ${schemes.map((s) => `${s}://`).join(' or ')}.`,
    );
  }
  return url;
}

/**
 * docs/behaviour.md, Notifications: http(s) only, to an address the egress guard lets the daemon
 * reach (docs/security.md). A name is checked now and again at each delivery.
 */
export async function checkWebhookUrl(raw: unknown, guard: EgressGuard): Promise<string> {
  const url = parse('webhook', raw, ['http', 'https']);
  const refusal = await guard.refusalOfHost(hostOf(url), portOf(url));
  if (refusal) {
    throw new ValidationError(
      `A webhook may not point at ${shownUrl(url.toString())}: ${refusal}.`,
      'Give the address of a receiver on the internet, outside slipway and its sandboxes.',
    );
  }
  return url.toString();
}

/** The operator's SMTP server (`--smtp-url`): smtp(s) only, an address the egress guard lets through. */
export async function checkSmtpUrl(raw: string, guard: EgressGuard): Promise<URL> {
  const url = parse('SMTP', raw, ['smtp', 'smtps']);
  const refusal = await guard.refusalOfHost(hostOf(url), portOf(url));
  if (refusal) throw new ValidationError(`--smtp-url may not point at ${shownUrl(url.toString())}: ${refusal}.`);
  return url;
}
