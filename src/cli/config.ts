import { homedir } from 'node:os';
import { join } from 'node:path';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { CliError } from './errors.js';

export interface CliConfig {
  url: string;
  token: string;
}

export function configPath(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'slipway', 'config.json');
}

export function readSavedConfig(env: NodeJS.ProcessEnv): Partial<CliConfig> {
  try {
    return JSON.parse(readFileSync(configPath(env), 'utf8')) as Partial<CliConfig>;
  } catch {
    return {};
  }
}

export function saveConfig(env: NodeJS.ProcessEnv, config: CliConfig): string {
  const path = configPath(env);
  mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
  writeFileSync(path, JSON.stringify(config, null, 2) + '\n', { mode: 0o600 });
  return path;
}

/** SLIPWAY_URL / SLIPWAY_TOKEN override the saved login. */
export function loadConfig(env: NodeJS.ProcessEnv): CliConfig {
  const saved = readSavedConfig(env);
  const url = env.SLIPWAY_URL || saved.url;
  const token = env.SLIPWAY_TOKEN || saved.token;
  if (!url || !token) {
    throw new CliError(
      'Not logged in to a slipway daemon.',
      'Run `slipway login --url <api-url> --token <token>` (the daemon prints it on first start), or set SLIPWAY_URL and SLIPWAY_TOKEN.',
    );
  }
  return { url: url.replace(/\/+$/, ''), token };
}
