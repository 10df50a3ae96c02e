import { command } from '../../command.js';
import { printObject } from '../../output.js';

export const orgCreate = command({
  path: ['org', 'create'],
  summary: 'Create an organisation (you become its owner)',
  usage: 'org create <name>',
  args: { min: 1, max: 1 },
  arguments: [{ name: '<name>', description: 'The organisation name' }],
  examples: ['slipway org create acme'],
  printsData: true,
  async run(ctx, [name]) {
    const { org } = await ctx.client().request<{ org: { id: string; name: string } }>('POST', '/v1/orgs', { name });
    printObject(ctx, { id: org.id, name: org.name }, org);
  },
});
