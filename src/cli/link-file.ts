import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CliError } from './errors.js';

export const LINK_FILE = '.slipway.json';

export interface LinkedApp {
  app_id: string;
  org_id: string;
  name: string;
  alias: string;
  git_ssh_url: string;
}

export interface LinkFile {
  apps: LinkedApp[];
  default: string | null;
}

/** The link file of the current folder or its nearest parent that has one. */
export function findLinkFile(cwd: string): { path: string; data: LinkFile } | undefined {
  let dir = cwd;
  for (;;) {
    const path = join(dir, LINK_FILE);
    if (existsSync(path)) {
      try {
        const data = JSON.parse(readFileSync(path, 'utf8')) as LinkFile;
        if (!Array.isArray(data.apps)) throw new Error('no "apps" array');
        return { path, data };
      } catch (error) {
        throw new CliError(`${path} is not a valid link file: ${(error as Error).message}.`, 'Fix or delete it, then run `slipway link <app>`.');
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

export function writeLinkFile(path: string, data: LinkFile): void {
  writeFileSync(path, JSON.stringify(data, null, 2) + '\n');
}

/** Adds (or replaces, by alias or id) a linked app and makes it the default when it is the first. */
export function linkApp(cwd: string, app: LinkedApp): string {
  const found = findLinkFile(cwd);
  const path = found?.path ?? join(cwd, LINK_FILE);
  const data: LinkFile = found?.data ?? { apps: [], default: null };
  const clash = data.apps.find((a) => a.alias === app.alias && a.app_id !== app.app_id);
  if (clash) {
    throw new CliError(`The alias ${JSON.stringify(app.alias)} already names ${clash.app_id} here.`, 'Choose another one with --alias.');
  }
  data.apps = data.apps.filter((a) => a.app_id !== app.app_id);
  data.apps.push(app);
  if (!data.default || !data.apps.some((a) => a.app_id === data.default)) data.default = app.app_id;
  writeLinkFile(path, data);
  return path;
}
