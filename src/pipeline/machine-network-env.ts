import { runChecked } from '../executor/run-captured.js';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Variables that say how this machine reaches registries: proxies and extra certificate authorities. */
const PASSED_THROUGH = [
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
];

/** npm's settings that say how this machine reaches registries, carried into the builds' npmrc. */
const NPM_KEYS = ['registry', 'cafile', 'strict-ssl', 'proxy', 'https-proxy', 'noproxy'];

/**
 * The values npm's configuration gives those keys, read with one `npm config get` (which prints
 * `key=value` lines when asked for several): each call starts npm, which costs a fraction of a
 * second of processor time at every daemon start. Unset values are left out; an npm that fails
 * leaves them all out.
 */
export async function npmNetworkConfig(): Promise<Map<string, string>> {
  try {
    const { stdout } = await runChecked(['npm', 'config', 'get', ...NPM_KEYS], {
      timeoutMs: 30_000,
      env: { ...process.env, npm_config_update_notifier: 'false' },
    });
    return parseNpmConfigLines(stdout);
  } catch {
    return new Map();
  }
}

/** Reads `npm config get a b …` output; a value may itself hold `=`. */
export function parseNpmConfigLines(stdout: string): Map<string, string> {
  const values = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const at = line.indexOf('=');
    if (at <= 0) continue;
    const key = line.slice(0, at).trim();
    const value = line.slice(at + 1).trim();
    if (!NPM_KEYS.includes(key) || value === '' || value === 'undefined' || value === 'null') continue;
    values.set(key, value);
  }
  return values;
}

/**
 * The build environment's view of the machine's network settings. Builds run with a fetched
 * npm and a HOME of their own, so they would not see the machine's npm configuration: its
 * registry and certificate settings go into a global npmrc (the lowest precedence, so an
 * app's own .npmrc still wins), and proxy/CA variables are passed through.
 */
export async function machineNetworkEnv(cacheDir: string, env: NodeJS.ProcessEnv = process.env): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const name of PASSED_THROUGH) if (env[name]) result[name] = env[name]!;
  const lines = [...(await npmNetworkConfig())].map(([key, value]) => `${key}=${value}`);
  const dir = join(cacheDir, 'machine');
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const file = join(dir, 'npmrc');
  await writeFile(file, lines.join('\n') + '\n', { mode: 0o644 });
  result.npm_config_globalconfig = file;
  return result;
}
