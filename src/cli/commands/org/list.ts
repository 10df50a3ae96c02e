import { command } from '../../command.js';
import { printTable } from '../../output.js';

export const orgList = command({
  path: ['org', 'list'],
  summary: 'List the organisations you belong to',
  usage: 'org list',
  args: { min: 0, max: 0 },
  examples: ['slipway org list'],
  printsData: true,
  async run(ctx) {
    const { orgs } = await ctx.client().request<{ orgs: Array<{ id: string; name: string; role: string }> }>('GET', '/v1/orgs');
    printTable(ctx, orgs, ['id', 'name', 'role']);
  },
});
