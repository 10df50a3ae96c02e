import { ValidationError } from '../core/errors.js';
import { type AddressGuard, refusalOfUrl } from './address-guard.js';

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

/** docs/behaviour.md, Notifications: http(s) only, never slipway itself nor the sandboxes. */
export async function checkWebhookUrl(raw: unknown, guard: AddressGuard): Promise<string> {
  const url = parse('webhook', raw, ['http', 'https']);
  const refusal = await refusalOfUrl(url, guard);
  if (refusal) {
    throw new ValidationError(
      `A webhook may not point at ${shownUrl(url.toString())}: ${refusal}.`,
      'Give the address of a receiver outside slipway and its sandboxes.',
    );
  }
  return url.toString();
}

/** The operator's SMTP server (`--smtp-url`): smtp(s) only, never slipway itself nor the sandboxes. */
export async function checkSmtpUrl(raw: string, guard: AddressGuard): Promise<URL> {
  const url = parse('SMTP', raw, ['smtp', 'smtps']);
  const refusal = await refusalOfUrl(url, guard);
  if (refusal) throw new ValidationError(`--smtp-url may not point at ${shownUrl(url.toString())}: ${refusal}.`);
  return url;
}
