import { FixableError } from '../../core/errors.js';
import type { SandboxBucket } from '../../sandbox/sandbox-identity.js';
import type { BucketPlace } from './fs-bucket-provider.js';
import { bucketMountRequests } from '../../core/fs-bucket-variables.js';

/** An FS bucket linked to the app, as its add-on record says. */
export interface LinkedBucket {
  id: string;
  name: string;
  host: string;
}

/**
 * The buckets the sandboxes of an app's release mount: each CC_FS_BUCKET variable of its
 * environment names a path and a bucket host, and the host must be one of a bucket linked to
 * the app (a host of another tenant's bucket is unknown here, not a way in). A value that
 * cannot be honoured stops the start with the reason: an app that writes where it believes a
 * bucket is would lose what it writes.
 */
export async function appBuckets(o: {
  env: Readonly<Record<string, string>>;
  linked: readonly LinkedBucket[];
  place(addonId: string): Promise<BucketPlace>;
}): Promise<SandboxBucket[]> {
  const buckets: SandboxBucket[] = [];
  for (const request of bucketMountRequests(o.env)) {
    const bucket = o.linked.find((b) => b.host === request.host);
    if (!bucket) {
      throw new FixableError(
        `${request.variable} names the bucket host ${request.host}, which no FS bucket linked to this application has.`,
        'Link the bucket (`slipway service link-addon <bucket> --app <app>`), or correct the value: `slipway addon env <bucket>` prints its BUCKET_HOST.',
      );
    }
    const place = await o.place(bucket.id);
    buckets.push({ path: request.path, source: place.source, gid: place.gid });
  }
  return buckets;
}

/** Where an app sees a bucket (`/uploads`), from its environment; a malformed environment shows none. */
export function mountPathsOf(env: Readonly<Record<string, string>>, host: string): string[] {
  try {
    return bucketMountRequests(env)
      .filter((r) => r.host === host)
      .map((r) => `/${r.path}`);
  } catch {
    return [];
  }
}
