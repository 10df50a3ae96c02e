import { command } from '../command.js';
import { APP_OPTIONS, resolveAppOption } from '../app-options.js';
import { openInBrowser } from '../open-browser.js';

export const consoleCommand = command({
  path: ['console'],
  summary: "Print the address of the application's page in the web console and open it when there is a display",
  usage: 'console [--app <app> | -a <alias>]',
  options: { ...APP_OPTIONS },
  args: { min: 0, max: 0 },
  examples: ['slipway console', 'slipway console --app shop'],
  async run(ctx, _args, options) {
    const app = await resolveAppOption(ctx, options);
    // The console is served by the API itself and addresses its pages by the URL fragment.
    const url = `${ctx.client().baseUrl}/#/apps/${encodeURIComponent(app.id)}`;
    ctx.out(`${url}\n`);
    await openInBrowser(ctx, url);
  },
});
