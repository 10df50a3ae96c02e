import { command } from '../command.js';
import { findLinkFile, writeLinkFile } from '../link-file.js';
import { CliError } from '../errors.js';

export const unlink = command({
  path: ['unlink'],
  summary: 'Remove an application from the folder link (the default one when no alias is given)',
  usage: 'unlink [alias]',
  args: { min: 0, max: 1 },
  arguments: [{ name: '[alias]', description: "The linked application's alias (default: the folder's default one)" }],
  examples: ['slipway unlink', 'slipway unlink staging'],
  async run(ctx, [alias]) {
    const found = findLinkFile(ctx.cwd);
    if (!found) throw new CliError('No application is linked to this folder.');
    const { data } = found;
    const target = alias === undefined ? data.apps.find((a) => a.app_id === data.default) : data.apps.find((a) => a.alias === alias);
    if (!target) {
      throw new CliError(
        `No linked application with alias ${JSON.stringify(alias)}.`,
        `Linked here: ${data.apps.map((a) => a.alias).join(', ') || 'none'}.`,
      );
    }
    data.apps = data.apps.filter((a) => a !== target);
    if (data.default === target.app_id) data.default = data.apps[0]?.app_id ?? null;
    writeLinkFile(found.path, data);
    ctx.err(`Unlinked ${target.alias} (${target.app_id}).\n`);
  },
});
