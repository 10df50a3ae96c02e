import { command } from '../../command.js';
import { printObject } from '../../output.js';

export const userCreate = command({
  path: ['user', 'create'],
  summary: 'Create a user and print their first API token (administrators)',
  usage: 'user create <name>',
  args: { min: 1, max: 1 },
  arguments: [{ name: '<name>', description: 'The user name (lower-case letters, digits, - and _)' }],
  examples: ['slipway user create alice'],
  printsData: true,
  async run(ctx, [name]) {
    const data = await ctx.client().request<{ user: { id: string; name: string }; token: string }>('POST', '/v1/users', { name });
    printObject(ctx, { id: data.user.id, name: data.user.name, token: data.token }, data);
    if (ctx.format === 'human') ctx.err('Give the token to the user: it is shown only once.\n');
  },
});
