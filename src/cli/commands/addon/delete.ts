import { command } from '../../command.js';
import { confirmByTyping } from '../../confirm.js';
import { addonPath, type AddonSummary } from '../../addon-types.js';

export const addonDelete = command({
  path: ['addon', 'delete'],
  summary: 'Delete an add-on and its data (asks for confirmation; refused while linked unless --unlink)',
  usage: 'addon delete <addon> [--yes] [--unlink] [--org <org>]',
  options: {
    yes: { type: 'boolean', short: 'y', description: 'Do not ask for confirmation' },
    unlink: { type: 'boolean', description: 'Unlink it from its applications first (else a linked add-on is kept)' },
    org: { type: 'string', value: '<org>', description: 'The organisation of the add-on, when several of yours have one of that name' },
  },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<addon>', description: 'The add-on: its id or name' }],
  examples: ['slipway addon delete shop-db', 'slipway addon delete shop-db --unlink --yes'],
  async run(ctx, [ref], options) {
    const client = ctx.client();
    const org = options.org;
    // Looked up first, so a typo fails before any question is asked.
    const { addon } = await client.request<{ addon: AddonSummary }>('GET', addonPath(ref, org));
    if (!options.yes) {
      const linked = addon.linked_apps.length ? ` It is linked to ${addon.linked_apps.length} application(s).` : '';
      await confirmByTyping(
        ctx,
        `Delete the ${addon.provider} add-on ${JSON.stringify(addon.name)} and all its data?${linked}`,
        addon.name,
        '--yes',
      );
    }
    const query = options.unlink ? '?unlink=1' : '';
    const result = await client.request<{ unlinked: string[] }>('DELETE', `/v1/addons/${encodeURIComponent(addon.id)}${query}`);
    if (result.unlinked.length)
      ctx.err(`Unlinked ${result.unlinked.length} application(s); they lose its variables at their next deploy or restart.\n`);
    ctx.err(`Deleted add-on ${addon.name} (${addon.id}).\n`);
  },
});
