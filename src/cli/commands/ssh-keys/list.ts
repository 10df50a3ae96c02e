import { command } from '../../command.js';
import { printTable } from '../../output.js';

export const sshKeysList = command({
  path: ['ssh-keys', 'list'],
  summary: 'List your SSH public keys',
  usage: 'ssh-keys list',
  args: { min: 0, max: 0 },
  examples: ['slipway ssh-keys list'],
  printsData: true,
  async run(ctx) {
    const { keys } = await ctx.client().request<{ keys: Array<Record<string, string>> }>('GET', '/v1/ssh-keys');
    printTable(ctx, keys, ['id', 'label', 'algorithm', 'fingerprint']);
  },
});
