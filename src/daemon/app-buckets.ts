import type { AddonManager } from '../addons/addon-manager.js';
import { appBuckets } from '../addons/fs-bucket/app-buckets.js';
import { FS_BUCKET, FsBucketProvider } from '../addons/fs-bucket/fs-bucket-provider.js';
import type { SandboxBucket } from '../sandbox/sandbox-identity.js';
import type { Store } from '../store/store.js';

/** The FS buckets the sandboxes of an app's release mount: its CC_FS_BUCKET variables, among its linked buckets. */
export async function bucketsOfApp(
  store: Store,
  addons: AddonManager,
  env: Record<string, string>,
  appId: string,
): Promise<SandboxBucket[]> {
  if (!Object.keys(env).some((name) => name.startsWith('CC_FS_BUCKET'))) return [];
  const linked = store.links
    .addonsOf(appId)
    .filter((row) => row.provider === FS_BUCKET)
    .map((row) => ({ id: row.id, name: row.name, host: store.addons.config(row).host ?? '' }));
  const provider = await addons.ensureStarted(FS_BUCKET);
  if (!(provider instanceof FsBucketProvider)) throw new Error('The fs-bucket provider is not the one this daemon knows.');
  return appBuckets({ env, linked, place: (id) => provider.place(id) });
}
