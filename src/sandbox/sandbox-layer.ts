/**
 * The writable layer of a sandbox that runs a release: the release folder stays as the build
 * left it (read-only, the lower layer of an overlay the runtime mounts at the folder's path),
 * and what the app writes into its folder goes to a scratch folder of this sandbox alone, gone
 * when the sandbox ends. So a file planted in the release does not survive a restart, a
 * rollback or a redeploy, while apps that write into their own folder at run time keep working
 * (Heroku's dynos behave the same way: an ephemeral filesystem).
 *
 * An instance's layer is shared by its before-start commands and its main process (what
 * `prestart` writes, the app reads) and lasts as long as the instance, across its automatic
 * restarts, as a container's writable layer does; the instance removes it when it stops. Any
 * other sandbox (a worker, a hook, a one-off command) has a layer of its own, removed with it.
 *
 * The scratch folder is `<layers>/<layer id>` (`upper`, `work`), where `<layers>` is a folder
 * in the app's own filesystem (its writes count against its disk budget) or, without one, the
 * sandbox's bundle. Every name on the way is the platform's: the daemon's layout and a sandbox
 * id. No process of an app ever sees these folders (only the merged view at its release path),
 * so removing them as root is not a walk through a tree an app is changing.
 */
import { chmodSync, chownSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { SandboxLayer } from './oci-config.js';
import { checkContainerId } from './runc-commands.js';

/** A release seen writable through a layer: `folder` is its path on the host and in the sandbox. */
export interface LayeredRelease {
  folder: string;
  /** The app it belongs to: its layers go to that app's filesystem. */
  appId: string;
  /**
   * A layer several sandboxes use in turn (an instance's: the id of its main sandbox), kept
   * when each ends and made only when missing; its owner removes it (SandboxHost.dropLayer).
   * Without it, the sandbox's own, fresh, removed with it.
   */
  shared?: string;
  /**
   * What the release's CC_PRE_RUN_HOOK wrote, kept with the release: read-only, between the
   * release folder and the sandbox's writes (src/pipeline/pre-run-layer.ts).
   */
  preRun?: string;
  /**
   * The pre-run hook's own sandbox: its layer is made afresh in this folder (of the platform's
   * layout, in a folder of root's) and kept when the sandbox ends, to become the release's
   * pre-run layer. Never recorded in the bundle: the sandbox's cleanup leaves it.
   */
  capture?: string;
}

/** Where the bundle records its layer, for the cleanup of a sandbox this daemon did not start. */
const LAYER_RECORD = 'layer';

/** A real folder (not a link), or an error naming the platform's folder. */
function directory(path: string, what: string) {
  const s = lstatSync(path);
  if (!s.isDirectory()) throw new Error(`${what} ${path} is not a folder.`);
  return s;
}

/**
 * The scratch folder of layer `id` in `layersRoot`. A sandbox's own is made afresh and recorded
 * in its bundle (first, so that a crash in between leaves nothing the cleanup does not know of);
 * a shared one is used as it is when it exists. The upper folder takes the owner and mode of the
 * release folder: it is what the app sees as its folder.
 */
export function makeLayer(o: {
  bundle: string;
  layersRoot: string;
  id: string;
  release: string;
  shared: boolean;
  preRun?: string;
  capture?: string;
}): SandboxLayer {
  const { release } = o;
  // A capture is made in its own folder (the pre-run layers'), any other layer in the app's layers folder.
  const layersRoot = o.capture === undefined ? o.layersRoot : dirname(o.capture);
  const scratch = o.capture ?? join(layersRoot, checkContainerId(o.id));
  const upper = join(scratch, 'upper');
  const work = join(scratch, 'work');
  if (!o.shared && o.capture === undefined) writeFileSync(join(o.bundle, LAYER_RECORD), scratch, { mode: 0o600 });
  mkdirSync(layersRoot, { recursive: true, mode: 0o700 });
  if (directory(layersRoot, 'The layers folder').uid !== 0) throw new Error(`The layers folder ${layersRoot} is not root's.`);
  const lower = directory(release, 'The release folder');
  // Written by the app's user when it was captured: a real folder, never a link followed.
  if (o.preRun !== undefined) directory(o.preRun, "The release's pre-run layer");
  const layer = { destination: release, lower: release, ...(o.preRun === undefined ? {} : { preRun: o.preRun }), upper, work };
  if (o.shared && existing(scratch) && existing(upper) && existing(work)) return layer;
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { mode: 0o700 });
  mkdirSync(upper, { mode: 0o700 });
  chownSync(upper, lower.uid, lower.gid);
  chmodSync(upper, lower.mode & 0o777);
  mkdirSync(work, { mode: 0o700 });
  return layer;
}

/** A real folder is there (a link or anything else is not: the layer is made again). */
function existing(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Removes layer `id` of `layersRoot` (a shared one, by its owner). */
export function removeLayer(layersRoot: string, id: string): void {
  rmSync(join(layersRoot, checkContainerId(id)), { recursive: true, force: true });
}

/** Removes the layer a bundle records (nothing when it has none). */
export function removeLayerOf(bundle: string): void {
  let scratch: string;
  try {
    scratch = readFileSync(join(bundle, LAYER_RECORD), 'utf8');
  } catch {
    return;
  }
  if (scratch.startsWith('/')) rmSync(scratch, { recursive: true, force: true });
}

/**
 * At daemon start, once the app's filesystem is mounted: removes every layer in `layersRoot`
 * whose sandbox has no bundle any more. A sandbox's bundle exists from before its layer is made
 * until after it is removed (an instance's layer is named after its main sandbox, whose bundle
 * lives as long as it runs), and the bundles of the sandboxes a daemon adopts are kept, so the
 * layer of a running instance is never touched.
 */
export function sweepLayers(layersRoot: string, bundlesDir: string): number {
  let entries: string[];
  try {
    directory(layersRoot, 'The layers folder');
    entries = readdirSync(layersRoot);
  } catch {
    return 0;
  }
  const stale = entries.filter((id) => {
    try {
      lstatSync(join(bundlesDir, id));
      return false;
    } catch {
      return true;
    }
  });
  for (const id of stale) rmSync(join(layersRoot, id), { recursive: true, force: true });
  return stale.length;
}
