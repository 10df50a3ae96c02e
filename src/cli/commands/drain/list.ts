import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';

/** A drain as the API shows it (src/api/routes/drains-routes.ts). */
export interface DrainView {
  id: string;
  type: string;
  url: string;
  username: string | null;
  with_access_logs: boolean;
  enabled: boolean;
  created_at: string;
  state: string;
  waiting: number;
  lag_seconds: number;
  dropped: number;
  delivered: number;
  last_error: string | null;
  last_delivery_at: string | null;
}

function lag(seconds: number): string {
  if (seconds < 1) return '0s';
  if (seconds < 120) return `${Math.round(seconds)}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  return `${Math.round(seconds / 3600)}h`;
}

/** One line per drain: id, type, URL, state, lag, lines waiting and dropped; the last error under it. */
export function printDrains(out: (text: string) => void, drains: DrainView[]): void {
  if (drains.length === 0) {
    out('No drains. Add one with `slipway drain create <type> <url>`.\n');
    return;
  }
  for (const d of drains) {
    const access = d.with_access_logs ? ' +access logs' : '';
    out(`${d.id}  ${d.type}  ${d.url}${access}  ${d.state}  lag ${lag(d.lag_seconds)}  waiting ${d.waiting}  dropped ${d.dropped}\n`);
    if (d.last_error) out(`    last error: ${d.last_error}\n`);
  }
}

export const drainList = command({
  path: ['drain'],
  summary: "List the application's log drains with their state, lag and lines dropped",
  usage: 'drain [--app <app>] [--format human|json]',
  options: { ...APP_OPTIONS },
  args: { min: 0, max: 0 },
  examples: ['slipway drain', 'slipway drain --format json'],
  printsData: true,
  async run(ctx, _args, options) {
    const app = await resolveAppOption(ctx, options);
    const { drains } = await ctx.client().request<{ drains: DrainView[] }>('GET', `/v1/apps/${app.id}/drains`);
    if (ctx.format === 'json') {
      ctx.out(JSON.stringify(drains, null, 2) + '\n');
      return;
    }
    printDrains(ctx.out, drains);
  },
});
