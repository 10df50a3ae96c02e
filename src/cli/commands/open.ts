import { command } from '../command.js';
import { APP_OPTIONS, resolveAppOption } from '../app-options.js';
import { openInBrowser } from '../open-browser.js';

export const open = command({
  path: ['open'],
  summary: "Print the application's URL and open it in a browser when there is a display",
  usage: 'open [--app <app> | -a <alias>]',
  options: { ...APP_OPTIONS },
  args: { min: 0, max: 0 },
  examples: ['slipway open', 'slipway open --alias staging'],
  async run(ctx, _args, options) {
    const app = await resolveAppOption(ctx, options);
    ctx.out(`${app.url}\n`);
    await openInBrowser(ctx, app.url);
  },
});
