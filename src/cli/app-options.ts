import type { CommandContext, OptionSpec } from './command.js';
import { CliError, UsageError } from './errors.js';
import { findOrImportLinkFile, resolveApp, type AppSummary } from './resolve-app.js';

/** How every command that acts on one application is told which: `--app` or `--alias`/`-a`. */
export const APP_OPTIONS = {
  app: {
    type: 'string',
    value: '<id|name|alias>',
    description: "The application: its id, its name among yours, or a linked alias (default: the folder's default app)",
  },
  alias: {
    type: 'string',
    short: 'a',
    value: '<alias>',
    description: 'The application linked to this folder under that alias (`slipway applications` shows the aliases)',
  },
} satisfies OptionSpec;

/** The application named by `--app` or `--alias`, else the folder's default. */
export async function resolveAppOption(ctx: CommandContext, options: { app?: string; alias?: string }): Promise<AppSummary> {
  const { app, alias } = options;
  if (app !== undefined && alias !== undefined) throw new UsageError('Give --app or --alias, not both.');
  if (alias === undefined) return resolveApp(ctx, app);
  const link = await findOrImportLinkFile(ctx);
  const linked = link?.data.apps.find((a) => a.alias === alias);
  if (!linked) {
    throw new CliError(
      `No application is linked here under the alias ${JSON.stringify(alias)}.`,
      link?.data.apps.length
        ? `Aliases linked in ${link.path}: ${link.data.apps.map((a) => a.alias).join(', ')}.`
        : 'Link one with `slipway link <app> --alias <alias>`, or name it with --app.',
    );
  }
  return resolveApp(ctx, linked.app_id);
}
