import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';
import { UsageError } from '../../errors.js';
import type { Services } from '../../service-types.js';
import { bucketMountPath, nextBucketVariable } from '../../../core/fs-bucket-variables.js';

export const serviceLinkAddon = command({
  path: ['service', 'link-addon'],
  summary: 'Link an add-on: the application receives its variables',
  usage: 'service link-addon <addon> [--app <app>] [--mount <path>]',
  options: {
    ...APP_OPTIONS,
    mount: {
      type: 'string',
      value: '<path>',
      description: 'FS buckets: where the app sees it, inside its folder (e.g. /uploads); sets CC_FS_BUCKET (or the next CC_FS_BUCKET_<n>)',
    },
  },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<addon>', description: 'The add-on to link: its id or name (same organisation)' }],
  examples: ['slipway service link-addon shop-db', 'slipway service link-addon shop-files --mount /uploads'],
  async run(ctx, [addon], options) {
    const app = await resolveAppOption(ctx, options);
    const mount = options.mount;
    // Checked before anything changes: a bad path is refused with nothing linked.
    const path = mount === undefined ? undefined : `/${bucketMountPath('--mount', mount)}`;
    const client = ctx.client();
    const services = await client.request<Services>('POST', `/v1/apps/${app.id}/services/addons`, { addon });
    ctx.err(`Linked add-on ${addon} to ${app.name}. Running instances see its variables after the next deploy or \`slipway restart\`.\n`);
    if (path === undefined) return;
    const linked = services.addons.find((a) => a.id === addon || a.name === addon);
    if (!linked?.bucket)
      throw new UsageError(
        `--mount is for FS buckets; ${addon} is a ${linked?.provider ?? 'different'} add-on (it is linked all the same).`,
      );
    const { env } = await client.request<{ env: Array<{ name: string }> }>('GET', `/v1/apps/${app.id}/env`);
    const variable = nextBucketVariable(env.map((v) => v.name));
    await client.request('PUT', `/v1/apps/${app.id}/env/${encodeURIComponent(variable)}`, { value: `${path}:${linked.bucket.host}` });
    ctx.err(
      `Set ${variable}=${path}:${linked.bucket.host}: its instances see the bucket at ${path} in the app's folder from the next deploy or restart.\n`,
    );
  },
});
