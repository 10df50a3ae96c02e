import type { AppStatusView, InstanceView } from '../../shared/api-types.js';
import { command } from '../command.js';
import { APP_OPTIONS, resolveAppOption } from '../app-options.js';
import { printObject } from '../output.js';
import { humanSize } from '../../shared/human-size.js';

/** "nano (512 MiB)"; a daemon from before flavours sends neither. */
function withMemory(flavor: string | undefined, bytes: number | undefined): string {
  if (flavor === undefined) return 'unknown (the daemon predates flavours)';
  return bytes === undefined ? flavor : `${flavor} (${humanSize(bytes)})`;
}

/** docs/behaviour.md, Liveness: "; replaced at 12:00:03Z an instance that did not answer GET / for 12 s". */
function livenessNote(liveness: InstanceView['liveness']): string {
  if (!liveness) return '';
  const at = liveness.at.replace(/\.\d+Z$/, 'Z');
  return liveness.state === 'replaced'
    ? `; replaced at ${at} an instance that ${liveness.reason}`
    : `; ${liveness.reason}: being replaced since ${at}`;
}

export const status = command({
  path: ['status'],
  summary: 'Show whether the application runs, what it runs, its flavours and what is being deployed',
  usage: 'status [--app <app>]',
  options: { ...APP_OPTIONS },
  args: { min: 0, max: 0 },
  examples: ['slipway status', 'slipway status --app shop --format json'],
  printsData: true,
  async run(ctx, _args, options) {
    const app = await resolveAppOption(ctx, options);
    const data = await ctx.client().request<AppStatusView>('GET', `/v1/apps/${app.id}/status`);
    printObject(
      ctx,
      {
        application: `${app.name} (${app.id})`,
        status: data.status,
        url: app.url,
        instances: data.asleep_since
          ? `0 running: asleep since ${data.asleep_since.slice(0, 19).replace('T', ' ')} (its next request wakes ${data.instance_count})`
          : `${data.instances.length} running of ${data.instance_count} wanted`,
        flavor: withMemory(app.flavor, app.flavor_memory_bytes),
        'build flavor': withMemory(app.build_flavor, app.build_flavor_memory_bytes),
        ...Object.fromEntries(
          data.instances.map((i) => [
            `instance ${i.number}`,
            `${i.state}, ${i.restarts} restart(s)${i.memory_bytes !== null ? `, ${Math.round(i.memory_bytes / 1024 / 1024)} MiB` : ''} (${i.id})${livenessNote(i.liveness)}`,
          ]),
        ),
        release: data.release ? `commit ${data.release.commit.slice(0, 12)} (${data.release.deployment_id})` : 'none',
        deploying: data.deploying.length ? data.deploying.map((d) => `${d.id} (${d.phase})`).join(', ') : 'no',
      },
      { app: app, ...data },
    );
  },
});
