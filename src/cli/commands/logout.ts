import { existsSync, rmSync } from 'node:fs';
import { command } from '../command.js';
import { configPath } from '../config.js';

export const logout = command({
  path: ['logout'],
  summary: 'Forget the saved daemon URL and API token (the token itself stays valid: `slipway tokens revoke` ends it)',
  usage: 'logout',
  args: { min: 0, max: 0 },
  examples: ['slipway logout'],
  async run(ctx) {
    const path = configPath(ctx.env);
    if (existsSync(path)) {
      rmSync(path);
      ctx.err(`Removed the saved login (${path}).\n`);
    } else {
      ctx.err(`No saved login (${path} does not exist).\n`);
    }
    if (ctx.env.SLIPWAY_TOKEN) ctx.err('SLIPWAY_TOKEN is still set in this environment, so commands keep using it: unset SLIPWAY_TOKEN.\n');
  },
});
