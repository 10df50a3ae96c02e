/**
 * What CC_PRE_RUN_HOOK writes into the app's folder, kept with the release it ran for: the
 * release folder never changes (src/sandbox/README.md), so the hook runs once, in a sandbox
 * whose writable layer is captured rather than thrown away, and that layer becomes a read-only
 * layer of the release, between the release folder and each sandbox's own writes. Every
 * instance, worker, hook and one-off command started from the release sees it; a restart, a
 * scale-up or a rollback to the release uses it without running the hook again.
 *
 * ```
 * <app folder>/pre-run-layers/                    root's (0700): no process of the app sees it
 * <app folder>/pre-run-layers/<release>.capture/  the hook's layer while it runs (upper, work)
 * <app folder>/pre-run-layers/<release>           the kept layer: the capture's upper folder
 * ```
 *
 * `<release>` is the release folder's name (the id of the deployment that built it). The folder
 * becomes the kept layer by a rename once the hook succeeded, so a kept layer is always whole.
 * What is inside was written by the app's user: root removes it only through
 * `UntrustedTree.remove` (an entry itself, a link never followed), and never reads it.
 */
import { lstatSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { UntrustedTree } from '../sandbox/untrusted-tree.js';
import { ownedFolder } from '../sandbox/owned-folder.js';
import type { DeployLayout } from '../storage/deploy-layout.js';

const CAPTURE_SUFFIX = '.capture';

/** A release folder's name, as the platform made it (a deployment id): safe in a path and an overlay option. */
function releaseName(releaseDir: string): string {
  const name = basename(releaseDir);
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/.test(name)) throw new Error(`Unexpected release folder name ${JSON.stringify(name)}.`);
  return name;
}

export class PreRunLayers {
  constructor(private readonly layout: DeployLayout) {}

  /** The kept layer of a release, when its pre-run hook ran: a real folder of the platform's layout. */
  kept(appId: string, releaseDir: string): string | undefined {
    const path = join(this.layout.preRunLayersFolder(appId), releaseName(releaseDir));
    try {
      return lstatSync(path).isDirectory() ? path : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Where the hook's sandbox makes its layer (SandboxLayer `capture`): a fresh name in the
   * pre-run layers folder, whatever an interrupted capture left there removed first.
   */
  async startCapture(appId: string, releaseDir: string): Promise<string> {
    const folder = this.layout.preRunLayersFolder(appId);
    await ownedFolder(folder, { uid: 0, gid: 0 });
    const name = `${releaseName(releaseDir)}${CAPTURE_SUFFIX}`;
    await this.tree(appId).remove(name);
    return join(folder, name);
  }

  /**
   * The hook succeeded: its upper folder becomes the release's kept layer (one rename, names of
   * the platform's own in a folder of root's), and the rest of the capture (overlayfs' work
   * folder) goes. Returns the kept layer.
   */
  async keep(appId: string, releaseDir: string): Promise<string> {
    const folder = this.layout.preRunLayersFolder(appId);
    const name = releaseName(releaseDir);
    const capture = `${name}${CAPTURE_SUFFIX}`;
    const tree = this.tree(appId);
    const upper = (await tree.list(capture)).find((e) => e.name === 'upper');
    if (upper?.kind !== 'folder') throw new Error(`The pre-run hook's layer of ${name} is missing.`);
    await tree.remove(name);
    await rename(join(folder, capture, 'upper'), join(folder, name));
    await tree.remove(capture);
    return join(folder, name);
  }

  /** The hook failed or was cancelled: nothing of what it wrote is kept. */
  async discard(appId: string, releaseDir: string): Promise<void> {
    await this.tree(appId).remove(`${releaseName(releaseDir)}${CAPTURE_SUFFIX}`);
  }

  /** Removes the kept layers (and unfinished captures) of every release not named in `keep`. */
  async prune(appId: string, keep: ReadonlySet<string>): Promise<void> {
    const tree = this.tree(appId);
    for (const entry of await tree.list('').catch(() => [])) {
      if (!keep.has(entry.name)) await tree.remove(entry.name);
    }
  }

  private tree(appId: string): UntrustedTree {
    return new UntrustedTree(this.layout.preRunLayersFolder(appId), { name: "the app's pre-run layers folder" });
  }
}
