import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { CommandContext } from './command.js';
import { CliError } from './errors.js';
import { findLinkFile, linkApp, writeLinkFile } from './link-file.js';
import type { AppSummary } from './resolve-app.js';

/** The reference tool's link file; a project moving over keeps it as it is. */
export const CLEVER_LINK_FILE = '.clever.json';

export interface CleverLinkedApp {
  app_id?: string;
  org_id?: string;
  deploy_url?: string;
  git_ssh_url?: string;
  name?: string;
  alias?: string;
}

/** The `.clever.json` of the folder or its nearest parent that has one. */
export function findCleverFile(cwd: string): { path: string; apps: CleverLinkedApp[]; default?: string } | undefined {
  let dir = cwd;
  for (;;) {
    const path = join(dir, CLEVER_LINK_FILE);
    if (existsSync(path)) {
      let data: { apps?: unknown; default?: unknown };
      try {
        data = JSON.parse(readFileSync(path, 'utf8')) as typeof data;
      } catch (error) {
        throw new CliError(`${path} is not valid JSON: ${(error as Error).message}.`, 'Fix it, or link with `slipway link <app>` instead.');
      }
      if (!Array.isArray(data.apps)) throw new CliError(`${path} has no "apps" list.`, 'Link with `slipway link <app>` instead.');
      const apps = (data.apps as unknown[]).filter((a): a is CleverLinkedApp => a !== null && typeof a === 'object');
      return { path, apps, default: typeof data.default === 'string' ? data.default : undefined };
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

export interface CleverImport {
  /** The slipway link file written (undefined when nothing was linked). */
  path?: string;
  linked: Array<{ alias: string; app: AppSummary }>;
  /** Entries not linked, each with the reason. */
  skipped: Array<{ entry: string; reason: string }>;
}

/** One of the user's apps for a `.clever.json` entry: by name, else by alias; never a guess among several. */
function matchApp(entry: CleverLinkedApp, apps: AppSummary[]): AppSummary | string {
  for (const key of [entry.name, entry.alias]) {
    if (!key) continue;
    const matches = apps.filter((a) => a.name === key);
    if (matches.length === 1) return matches[0]!;
    if (matches.length > 1)
      return `several of your applications are named ${JSON.stringify(key)} (${matches.map((a) => a.org_name ?? a.org_id).join(', ')}): link one by id`;
  }
  return 'no application of that name among yours on this slipway';
}

/**
 * Links the folder of a `.clever.json` to the apps it names that exist here (matched by name,
 * then alias, among the user's apps), keeping each alias and, when it matched, the default.
 * The reference's ids mean nothing to slipway, so they are only used to find the default.
 */
export async function importCleverFile(ctx: CommandContext, clever: NonNullable<ReturnType<typeof findCleverFile>>): Promise<CleverImport> {
  const { apps } = await ctx.client().request<{ apps: AppSummary[] }>('GET', '/v1/apps');
  const folder = dirname(clever.path);
  const result: CleverImport = { linked: [], skipped: [] };
  let defaultId: string | undefined;
  for (const entry of clever.apps) {
    const label = entry.alias ?? entry.name ?? entry.app_id ?? '(unnamed)';
    const match = matchApp(entry, apps);
    if (typeof match === 'string') {
      result.skipped.push({ entry: label, reason: match });
      continue;
    }
    const alias = entry.alias || match.name;
    const already = findLinkFile(folder)?.data.apps.find((a) => a.app_id === match.id || a.alias === alias);
    if (already) {
      result.skipped.push({ entry: label, reason: `already linked here as ${JSON.stringify(already.alias)}` });
      continue;
    }
    result.path = linkApp(folder, { app_id: match.id, org_id: match.org_id, name: match.name, alias, git_ssh_url: match.git_url });
    result.linked.push({ alias, app: match });
    if (entry.app_id && entry.app_id === clever.default) defaultId = match.id;
  }
  if (defaultId && result.path) {
    const link = findLinkFile(folder)!;
    link.data.default = defaultId;
    writeLinkFile(link.path, link.data);
  }
  return result;
}

/** Tells what an import did, on stderr. */
export function reportCleverImport(ctx: CommandContext, cleverPath: string, result: CleverImport): void {
  for (const { alias, app } of result.linked) ctx.err(`Linked ${app.name} (${app.id}) as ${JSON.stringify(alias)}, from ${cleverPath}.\n`);
  for (const { entry, reason } of result.skipped) ctx.err(`Skipped ${JSON.stringify(entry)} of ${cleverPath}: ${reason}.\n`);
}
