import type { IncomingMessage, ServerResponse } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Serves the web console on the API's port: the page at `/`, its stylesheet and its
 * compiled browser modules under `/console/`. Everything else is left to the API (404).
 *
 * The page only ever talks to this same origin; the Content-Security-Policy makes the
 * browser refuse anything else (no CDN, no web font, no inline script).
 */
export interface ConsoleFiles {
  /** index.html and style.css. */
  staticDir: string;
  /** Output of tsconfig.console.json: `console/browser/main.js` and the modules it imports. */
  scriptsDir: string;
}

export const CONSOLE_PREFIX = '/console/';
export const CONSOLE_ENTRY = `${CONSOLE_PREFIX}js/console/browser/main.js`;

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The slipway folder: the nearest parent of this module holding package.json. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`No package.json above ${fileURLToPath(import.meta.url)}: is slipway installed whole?`);
    dir = parent;
  }
  return dir;
}

export function defaultConsoleFiles(): ConsoleFiles {
  const root = packageRoot();
  return { staticDir: join(root, 'src', 'console', 'static'), scriptsDir: join(root, 'dist', 'console') };
}

/** Maps a request path to a file, or undefined when it names nothing the console serves. */
export function consoleFileFor(files: ConsoleFiles, path: string): string | undefined {
  if (path === '/' || path === '/index.html') return join(files.staticDir, 'index.html');
  if (path === `${CONSOLE_PREFIX}style.css`) return join(files.staticDir, 'style.css');
  if (path === `${CONSOLE_PREFIX}icon.svg`) return join(files.staticDir, 'icon.svg');
  if (path === `${CONSOLE_PREFIX}boot.js`) return join(files.staticDir, 'boot.js');
  const jsPrefix = `${CONSOLE_PREFIX}js/`;
  if (!path.startsWith(jsPrefix) || !/\.js(\.map)?$/.test(path)) return undefined;
  let relative: string;
  try {
    relative = decodeURIComponent(path.slice(jsPrefix.length));
  } catch {
    return undefined;
  }
  const base = resolve(files.scriptsDir);
  const file = resolve(base, relative);
  // Only files inside the scripts folder: `..` or an absolute path never escapes it.
  return file.startsWith(base + sep) ? file : undefined;
}

function send(res: ServerResponse, status: number, type: string, body: Buffer | string, head: boolean): void {
  const data = typeof body === 'string' ? Buffer.from(body) : body;
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'content-length': data.length, 'cache-control': 'no-cache' });
  res.end(head ? undefined : data);
}

/** A FallbackHandler for createApiServer: answers the console's paths, declines the rest. */
export function consoleHandler(files: ConsoleFiles = defaultConsoleFiles()): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const path = new URL(req.url ?? '/', 'http://console.invalid').pathname;
    const file = consoleFileFor(files, path);
    if (!file) return false;
    const head = req.method === 'HEAD';
    if (!existsSync(file)) {
      // The page itself says to build the scripts when its entry module never loads.
      send(
        res,
        404,
        'text/plain; charset=utf-8',
        `The console has no file ${path}. If it is one of its scripts, run \`npm run build\` in the slipway folder.\n`,
        head,
      );
      return true;
    }
    const type = TYPES[file.slice(file.lastIndexOf('.'))] ?? 'application/octet-stream';
    send(res, 200, type, readFileSync(file), head);
    return true;
  };
}
