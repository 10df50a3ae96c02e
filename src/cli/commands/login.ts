import { command } from '../command.js';
import { ApiClient } from '../api-client.js';
import { saveConfig } from '../config.js';
import { UsageError } from '../errors.js';

export const login = command({
  path: ['login'],
  summary: 'Save the daemon URL and an API token for later commands',
  usage: 'login --url <api-url> --token <token>',
  options: {
    url: { type: 'string', value: '<api-url>', description: 'The daemon API, e.g. http://127.0.0.1:4040' },
    token: {
      type: 'string',
      value: '<token>',
      description: 'An API token (the daemon prints the first one; `slipway tokens create` makes more)',
    },
  },
  args: { min: 0, max: 0 },
  examples: ['slipway login --url http://127.0.0.1:4040 --token "$(sudo cat /var/lib/slipway/admin-token)"'],
  async run(ctx, _args, options) {
    const url = options.url;
    const token = options.token;
    if (!url || !token) throw new UsageError('Both --url and --token are needed.');
    const config = { url: url.replace(/\/+$/, ''), token };
    const me = await new ApiClient(config).request<{ user: { name: string } }>('GET', '/v1/me');
    const path = saveConfig(ctx.env, config);
    ctx.err(`Logged in to ${config.url} as ${me.user.name}; saved in ${path}.\n`);
  },
});
