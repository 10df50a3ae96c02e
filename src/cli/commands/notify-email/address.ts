import { command } from '../../command.js';

export const notifyEmailAddress = command({
  path: ['notify-email', 'address'],
  summary: 'Show or set the address you are mailed at by notifications to `user` and `ORGANISATION`',
  usage: 'notify-email address [<address>]',
  args: { min: 0, max: 1 },
  arguments: [{ name: '[<address>]', description: 'Your e-mail address; without it, the one set is shown' }],
  examples: ['slipway notify-email address', 'slipway notify-email address me@example.com'],
  async run(ctx, [address]) {
    if (address === undefined) {
      const answer = await ctx.client().request<{ address: string | null }>('GET', '/v1/me/email');
      if (answer.address) ctx.out(`${answer.address}\n`);
      else ctx.err('No address set: `slipway notify-email address <address>` sets one.\n');
      return;
    }
    const answer = await ctx.client().request<{ address: string }>('PUT', '/v1/me/email', { address });
    ctx.err(`Notifications to you now go to ${answer.address}.\n`);
  },
});
