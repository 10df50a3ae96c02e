import { existsSync } from 'node:fs';
import type { Deployment } from '../store/deployments.js';
import { parseReleaseSpec } from '../serving/release-spec.js';

/**
 * Whether the release a deployment built is still on disk, so a rollback or a restart on its
 * commit can start it again without a rebuild (older ones are removed beyond the kept count).
 */
export function releaseKeptOnDisk(d: Deployment): boolean {
  if (d.state !== 'OK' || !d.release_json) return false;
  try {
    return existsSync(parseReleaseSpec(d.release_json).releaseDir);
  } catch {
    return false;
  }
}
