import type { RestoredPlatform } from '../../backups/platform/platform-restore.js';
import type { Store } from '../../store/store.js';
import { unpackRestoredReleases } from '../restore-setup.js';
import type { DaemonBase, SandboxesBuilt } from './stage.js';

/**
 * Before any release starts: the kept releases a platform backup carried, unpacked in the apps'
 * folders (with `--restore-from` only). Needs: `restored`, `store`, the sandboxes' `layout` and
 * `appUsers`. Provides nothing.
 */
export async function restoredReleases(
  needs: DaemonBase & Pick<SandboxesBuilt, 'layout' | 'appUsers'> & { store: Store; restored: RestoredPlatform | undefined },
) {
  const { options, store, restored, layout, appUsers, log } = needs;
  if (restored) await unpackRestoredReleases(restored, { store, layout, appUsers, toolchainCacheDir: options.toolchainCacheDir, log });
  return {};
}
