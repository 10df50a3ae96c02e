import { command } from '../command.js';
import { linkApp } from '../link-file.js';
import { resolveApp } from '../resolve-app.js';
import { CliError, UsageError } from '../errors.js';
import { CLEVER_LINK_FILE, findCleverFile, importCleverFile, reportCleverImport } from '../clever-file.js';

export const link = command({
  path: ['link'],
  summary: `Link the current folder to an existing application, or to those its ${CLEVER_LINK_FILE} names (--from-clever)`,
  usage: 'link <app-id|name> [--alias <alias>] | link --from-clever',
  options: {
    alias: {
      type: 'string',
      short: 'a',
      value: '<alias>',
      description: 'The name this folder uses for the app (default: the app name); must not be linked here already',
    },
    'from-clever': {
      type: 'boolean',
      description: `Link the applications of the folder's ${CLEVER_LINK_FILE} (the reference tool's link file) that exist here, matched by name then alias, keeping their aliases`,
    },
  },
  args: { min: 0, max: 1 },
  arguments: [{ name: '<app-id|name>', description: 'The application: its id, or its name among yours' }],
  examples: ['slipway link shop', 'slipway link app_0b6f2c0e-5f0c-4c3e-9d8f-1a2b3c4d5e6f --alias staging', 'slipway link --from-clever'],
  async run(ctx, [ref], options) {
    if (options['from-clever']) {
      if (ref !== undefined || options.alias !== undefined)
        throw new UsageError('--from-clever takes neither an application nor --alias: they come from the file.');
      const clever = findCleverFile(ctx.cwd);
      if (!clever)
        throw new CliError(
          `No ${CLEVER_LINK_FILE} in this folder or its parents.`,
          'Link an application by name with `slipway link <app>`.',
        );
      const result = await importCleverFile(ctx, clever);
      reportCleverImport(ctx, clever.path, result);
      if (result.linked.length === 0) {
        throw new CliError(
          `None of the applications of ${clever.path} could be linked.`,
          'Create them with `slipway create --type <type> <name>` (same names), then run `slipway link --from-clever` again.',
        );
      }
      ctx.err(`Wrote ${result.path}.\n`);
      return;
    }
    if (ref === undefined) throw new UsageError('Missing argument <app-id|name> (or give --from-clever).');
    const app = await resolveApp(ctx, ref);
    const alias = options.alias ?? app.name;
    const path = linkApp(ctx.cwd, { app_id: app.id, org_id: app.org_id, name: app.name, alias, git_ssh_url: app.git_url });
    ctx.err(`Linked ${app.name} (${app.id}) as ${JSON.stringify(alias)} in ${path}.\n`);
  },
});
