/**
 * The pages the router itself answers with, whatever the engine. nginx serves them by
 * `return CODE "..."`, so the text goes through nginxQuoted(); it must never contain "$"
 * (nginx would expand it as a variable). HAProxy serves them from files. The only dynamic part is a host name that validateHostName() already
 * reduced to [a-z0-9.-], which is inert in both HTML and nginx syntax.
 */

function page(title: string, body: string): string {
  return (
    "<!doctype html><html lang='en'><head><meta charset='utf-8'>" +
    `<title>${title}</title>` +
    '<style>body{font-family:system-ui,sans-serif;max-width:40em;margin:4em auto;padding:0 1em;color:#222}' +
    'code{background:#f2f2f2;padding:0 .3em}</style></head>' +
    `<body><h1>${title}</h1>${body}</body></html>\n`
  );
}

/** The host is known to slipway but no instance is running (or healthy) right now. */
export function noInstancePage(host?: string): string {
  return page(
    '503 - no running instance',
    `<p>${host ? `<strong>${host}</strong>` : 'This app'} has no running instance right now.</p>` +
      '<p>If you own this app: deploy it with <code>git push</code>, or start it again with ' +
      '<code>slipway restart</code>. If a deployment is in progress, retry in a few seconds.</p>',
  );
}

/** No app on this slipway answers to the requested Host. The host is not echoed: it is client input. */
export function unknownHostPage(): string {
  return page(
    '404 - no such app',
    '<p>No app on this slipway answers to the domain name in this request.</p>' +
      '<p>Check the domain for typos. If you own the app, <code>slipway applications</code> lists your apps; ' +
      'each answers at its own domain, and DNS for that domain must point at this machine.</p>',
  );
}

/** nginx could not reach or hear back from the app's instance in time. */
export function upstreamFailedPage(status: 502 | 504): string {
  const title = status === 502 ? '502 - the app did not answer' : '504 - the app answered too slowly';
  return page(
    title,
    "<p>The router reached this app's instance but did not get a usable answer " +
      (status === 502 ? '(the connection failed or the app closed it).' : 'in time.') +
      '</p><p>If you own this app: look at its logs with <code>slipway logs</code>; the app must listen on ' +
      '<code>0.0.0.0:8080</code>.</p>',
  );
}

/** Quotes text as an nginx string literal. Refuses "$" instead of trying to escape it. */
export function nginxQuoted(text: string): string {
  if (text.includes('$')) {
    throw new Error(
      `Text for the nginx configuration contains "$", which nginx would expand as a variable: ${JSON.stringify(text.slice(0, 60))}`,
    );
  }
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}
