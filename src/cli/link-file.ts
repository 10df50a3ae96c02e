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
        throw new CliError(
          `${path} is not a valid link file: ${(error as Error).message}.`,
          'Fix or delete it, then run `slipway link <app>`.',
        );
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

/** Refuses, before anything is created, an alias the folder's link file already uses. */
export function assertAliasFree(cwd: string, alias: string): void {
  const clash = findLinkFile(cwd)?.data.apps.find((a) => a.alias === alias);
  if (clash)
    throw new CliError(
      `The alias ${JSON.stringify(alias)} already names ${clash.name} (${clash.app_id}) here.`,
      'Choose another one with --alias.',
    );
}

/** Adds a linked app, made the default when it is the first; an id or alias linked already is refused. */
export function linkApp(cwd: string, app: LinkedApp, folder = cwd): string {
  const found = findLinkFile(cwd);
  const path = found?.path ?? join(folder, LINK_FILE);
  const data: LinkFile = found?.data ?? { apps: [], default: null };
  const same = data.apps.find((a) => a.app_id === app.app_id);
  if (same) {
    throw new CliError(
      `${app.name} (${app.app_id}) is already linked here as ${JSON.stringify(same.alias)} in ${path}.`,
      `To rename it: slipway unlink ${same.alias} && slipway link ${app.app_id} --alias <alias>.`,
    );
  }
  const clash = data.apps.find((a) => a.alias === app.alias);
  if (clash) {
    throw new CliError(
      `The alias ${JSON.stringify(app.alias)} already names ${clash.name} (${clash.app_id}) here.`,
      'Choose another one with --alias.',
    );
  }
  data.apps.push(app);
  if (!data.default || !data.apps.some((a) => a.app_id === data.default)) data.default = app.app_id;
  writeLinkFile(path, data);
  return path;
}
