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

async function npmConfig(key: string): Promise<string | undefined> {
  try {
    const { stdout } = await runChecked(['npm', 'config', 'get', key], { timeoutMs: 30_000 });
    const value = stdout.trim();
    return value === '' || value === 'undefined' || value === 'null' ? undefined : value;
  } catch {
    return undefined;
  }
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
  const lines: string[] = [];
  for (const key of ['registry', 'cafile', 'strict-ssl', 'proxy', 'https-proxy', 'noproxy']) {
    const value = await npmConfig(key);
    if (value !== undefined && !(key === 'noproxy' && value === '')) lines.push(`${key}=${value}`);
  }
  const dir = join(cacheDir, 'machine');
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const file = join(dir, 'npmrc');
  await writeFile(file, lines.join('\n') + '\n', { mode: 0o644 });
  result.npm_config_globalconfig = file;
  return result;
}
