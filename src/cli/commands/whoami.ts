import { command } from '../command.js';
import { printObject } from '../output.js';
import { readSavedConfig } from '../config.js';

interface Me {
  user: { id: string; name: string; admin: boolean };
  orgs: Array<{ id: string; name: string; role: string }>;
  token?: { id: string; label: string; expires_at: string | null } | null;
}

export const whoami = command({
  path: ['whoami'],
  aliases: [['profile']],
  summary: 'Show who you are logged in as, on which daemon, with which token, and your organisations',
  usage: 'whoami',
  args: { min: 0, max: 0 },
  examples: ['slipway whoami', 'slipway profile --format json'],
  printsData: true,
  async run(ctx) {
    const client = ctx.client();
    const me = await client.request<Me>('GET', '/v1/me');
    const source = ctx.env.SLIPWAY_TOKEN ? 'SLIPWAY_TOKEN' : readSavedConfig(ctx.env).token ? 'saved login' : 'unknown';
    printObject(
      ctx,
      {
        user: `${me.user.name}${me.user.admin ? ' (administrator)' : ''}`,
        id: me.user.id,
        daemon: client.baseUrl,
        token: me.token
          ? `${me.token.label} (${me.token.id}), ${me.token.expires_at ? `expires ${me.token.expires_at}` : 'never expires'}, from ${source}`
          : `from ${source}`,
        organisations: me.orgs.map((o) => `${o.name} (${o.role})`).join(', ') || 'none',
      },
      { ...me, daemon: client.baseUrl },
    );
  },
});
