import type { AppView } from '../shared/api-types.js';
import type { CommandContext } from './command.js';
import { CliError } from './errors.js';
import { findLinkFile, type LinkFile } from './link-file.js';
import { findCleverFile, importCleverFile, reportCleverImport } from './clever-file.js';

/** An application as the API describes it (one shape for the API, the CLI and the console). */
export type AppSummary = AppView;

const APP_ID = /^app_[0-9a-f-]{36}$/;

/**
 * The app a command works on: `--app <id|name|alias>`, else the linked folder's default.
 * Names are looked up among the user's apps and must be unambiguous.
 */
export async function resolveApp(ctx: CommandContext, ref: string | undefined): Promise<AppSummary> {
  const link = ref !== undefined && APP_ID.test(ref) ? undefined : await findOrImportLinkFile(ctx);
  let id: string | undefined;
  if (ref === undefined) {
    id = link?.data.default ?? undefined;
    if (!id) {
      throw new CliError(
        'No application is linked to this folder.',
        'Run `slipway create ...` or `slipway link <app>` here, or pass --app <id|name|alias>.',
      );
    }
  } else if (APP_ID.test(ref)) {
    id = ref;
  } else {
    id = link?.data.apps.find((a) => a.alias === ref)?.app_id;
  }
  const client = ctx.client();
  if (id) return (await client.request<{ app: AppSummary }>('GET', `/v1/apps/${encodeURIComponent(id)}`)).app;
  const { apps } = await client.request<{ apps: AppSummary[] }>('GET', '/v1/apps');
  const matches = apps.filter((a) => a.name === ref);
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) {
    throw new CliError(
      `Several applications are named ${JSON.stringify(ref)}: ${matches.map((a) => `${a.id} (${a.org_name})`).join(', ')}.`,
      'Pass the application id instead.',
    );
  }
  throw new CliError(`No application ${JSON.stringify(ref)} among yours.`, '`slipway applications` lists the applications you can reach.');
}

/**
 * First use in a project that moved over from the reference tool: a folder with a
 * `.clever.json` and no slipway link file is linked to the apps it names that exist here.
 */
export async function findOrImportLinkFile(ctx: CommandContext): Promise<{ path: string; data: LinkFile } | undefined> {
  const found = findLinkFile(ctx.cwd);
  if (found) return found;
  const clever = findCleverFile(ctx.cwd);
  if (!clever) return undefined;
  const result = await importCleverFile(ctx, clever);
  reportCleverImport(ctx, clever.path, result);
  return findLinkFile(ctx.cwd);
}
