import { command } from '../../command.js';
import { confirmByTyping } from '../../confirm.js';

interface StopReport {
  apps: string[];
  instances: number;
  addon_servers: string[];
  router: string;
}

export const systemStop = command({
  path: ['system', 'stop'],
  summary:
    'Administrators: drain and stop every app, worker, add-on server and the router, then the daemon (a plain restart of the daemon leaves them serving)',
  usage: 'system stop [--yes]',
  options: { yes: { type: 'boolean', short: 'y', description: 'Do not ask for confirmation' } },
  args: { min: 0, max: 0 },
  examples: ['slipway system stop', 'slipway system stop --yes'],
  async run(ctx, _args, options) {
    if (!options.yes) {
      await confirmByTyping(
        ctx,
        'Stop every application, add-on server and the router of this slipway? Nothing is served until the daemon starts again.',
        'stop',
        '--yes',
      );
    }
    const report = await ctx.client().request<StopReport>('POST', '/v1/system/stop');
    const apps = report.apps.length ? `${report.apps.length} app(s) (${report.apps.join(', ')})` : 'no app';
    ctx.out(`Stopped ${apps}: ${report.instances} instance(s) with their workers.\n`);
    ctx.out(`Add-on servers stopped: ${report.addon_servers.length ? report.addon_servers.join(', ') : 'none was running'}.\n`);
    ctx.out(`Router: ${report.router}.\n`);
    ctx.out('The daemon is stopping; start it again to serve the apps.\n');
  },
});
