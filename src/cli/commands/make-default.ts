import { command } from '../command.js';
import { findLinkFile, writeLinkFile } from '../link-file.js';
import { CliError } from '../errors.js';

export const makeDefault = command({
  path: ['make-default'],
  summary: 'Make a linked application the one commands use when given no --app or --alias',
  usage: 'make-default <alias>',
  args: { min: 1, max: 1 },
  arguments: [{ name: '<alias>', description: 'The alias of an application linked to this folder' }],
  examples: ['slipway make-default staging'],
  async run(ctx, [alias]) {
    const found = findLinkFile(ctx.cwd);
    if (!found) throw new CliError('No application is linked to this folder.', 'Link one with `slipway link <app>`.');
    const target = found.data.apps.find((a) => a.alias === alias);
    if (!target) {
      throw new CliError(
        `No linked application with alias ${JSON.stringify(alias)}.`,
        `Linked here: ${found.data.apps.map((a) => a.alias).join(', ') || 'none'}.`,
      );
    }
    found.data.default = target.app_id;
    writeLinkFile(found.path, found.data);
    ctx.err(`${target.alias} (${target.app_id}) is now the default application of ${found.path}.\n`);
  },
});
