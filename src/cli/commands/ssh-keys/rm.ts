import { command } from '../../command.js';

export const sshKeysRm = command({
  path: ['ssh-keys', 'rm'],
  summary: 'Remove one of your SSH keys (id, label or fingerprint)',
  usage: 'ssh-keys rm <key>',
  args: { min: 1, max: 1 },
  arguments: [{ name: '<key>', description: 'The key: its id, label or fingerprint' }],
  examples: ['slipway ssh-keys rm laptop'],
  async run(ctx, [key]) {
    await ctx.client().request('DELETE', `/v1/ssh-keys/${encodeURIComponent(key)}`);
    ctx.err(`Removed SSH key ${key}.\n`);
  },
});
