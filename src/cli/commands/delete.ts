import { command } from '../command.js';
import { APP_OPTIONS, resolveAppOption } from '../app-options.js';
import { confirmByTyping } from '../confirm.js';
import { findLinkFile, writeLinkFile } from '../link-file.js';

export const deleteApp = command({
  path: ['delete'],
  summary: 'Delete the application: its instances, domain, repository, releases, caches and user (add-ons stay)',
  usage: 'delete [--app <app>] [--yes]',
  options: { ...APP_OPTIONS, yes: { type: 'boolean', short: 'y', description: 'Do not ask for confirmation' } },
  args: { min: 0, max: 0 },
  examples: ['slipway delete', 'slipway delete --app shop --yes'],
  async run(ctx, _args, options) {
    const app = await resolveAppOption(ctx, options);
    if (!options.yes) {
      await confirmByTyping(
        ctx,
        `Delete the application ${JSON.stringify(app.name)} (${app.id}), its releases and its pushed history? Its add-ons stay.`,
        app.name,
        '--yes',
      );
    }
    await ctx.client().request('DELETE', `/v1/apps/${encodeURIComponent(app.id)}`);
    // The folder's link to the deleted app would only lead to "not found" from now on.
    const found = findLinkFile(ctx.cwd);
    if (found?.data.apps.some((a) => a.app_id === app.id)) {
      found.data.apps = found.data.apps.filter((a) => a.app_id !== app.id);
      if (found.data.default === app.id) found.data.default = found.data.apps[0]?.app_id ?? null;
      writeLinkFile(found.path, found.data);
    }
    ctx.err(`Deleted ${app.name} (${app.id}). Its name is free again.\n`);
  },
});
