import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync, createReadStream, createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { DockerApi } from './docker-api.js';
import { baseImageTag, debianSuite, importBaseImage } from './base-image.js';
import { imageExists, pinnedName, pushImage } from './image-transfer.js';
import { buildContext, layerDockerfile } from './build-context.js';
import type { RegistryAccess } from './registry.js';
import { runChecked } from '../../executor/run-captured.js';

export interface ReleaseImagesOptions {
  api: DockerApi;
  /** The registry every node pulls from. */
  registry: RegistryAccess;
  /** Repository prefix inside the registry, e.g. `slipway`. */
  namespace: string;
  log(line: string): void;
}

export interface ReleaseImageRequest {
  appId: string;
  deploymentId: string;
  releaseDir: string;
  /** What the release's CC_PRE_RUN_HOOK wrote (ReleaseSpec.preRunLayer): one more layer, over the release folder. */
  preRunLayer?: string;
  /** Shared read-only folders (the toolchains): one layer, shared by every release while unchanged. */
  readOnlyPaths: string[];
  user: { uid: number; gid: number };
}

/** The base and toolchain images are the same for every daemon on the machine: built once, shared. */
const SHARED_NAMESPACE = 'slipway';

export const LABEL_APP = 'slipway.app';
export const LABEL_DEPLOYMENT = 'slipway.deployment';
export const LABEL_RELEASE_DIR = 'slipway.release-dir';
export const LABEL_PRE_RUN_LAYER = 'slipway.pre-run-layer';

/**
 * Turns releases into images: base (Debian, built once) → toolchains layer (rebuilt when the
 * toolchain folders change) → release layer, tagged `<registry>/<namespace>/<app>:<deployment>`
 * and pushed so that every node of the swarm can pull it.
 */
export class ReleaseImages {
  private base: Promise<string> | undefined;
  private readonly toolchains = new Map<string, Promise<string>>();
  private readonly releases = new Map<string, Promise<string>>();

  private readonly address: string;

  constructor(private readonly o: ReleaseImagesOptions) {
    this.address = o.registry.address;
  }

  /** The base image's name, building it on first use. */
  ensureBase(): Promise<string> {
    this.base ??= (async () => {
      const repository = `${this.address}/${SHARED_NAMESPACE}/base`;
      const tag = baseImageTag(debianSuite());
      const name = `${repository}:${tag}`;
      if (!(await imageExists(this.o.api, name))) await importBaseImage(this.o.api, repository, tag, this.o.log);
      return name;
    })();
    this.base.catch(() => (this.base = undefined));
    return this.base;
  }

  /**
   * The image of a release, by digest (`<repository>@sha256:...`): built and pushed once per
   * deployment, whatever the number of instances.
   */
  releaseImage(request: ReleaseImageRequest): Promise<string> {
    const name = `${this.address}/${this.o.namespace}/${repositoryName(request.appId)}:${tagName(request.deploymentId)}`;
    const key = `${name}\n${request.preRunLayer ?? ''}\n${request.releaseDir}`;
    let pending = this.releases.get(key);
    if (!pending) {
      pending = this.buildRelease(name, request);
      this.releases.set(key, pending);
      pending.catch(() => this.releases.delete(key));
    }
    return pending;
  }

  private async buildRelease(name: string, r: ReleaseImageRequest): Promise<string> {
    // Built by an earlier run of the daemon (its instances adopted since): a deployment's release
    // folder never changes, so its image is reused, pushed again in case that push never ended.
    if (await this.builtBefore(name, r)) return pinnedName(name, await pushImage(this.o.api, name, this.o.registry));
    const from = r.readOnlyPaths.length ? await this.toolchainImage(r.readOnlyPaths) : await this.ensureBase();
    const labels = {
      [LABEL_APP]: r.appId,
      [LABEL_DEPLOYMENT]: r.deploymentId,
      [LABEL_RELEASE_DIR]: r.releaseDir,
      [LABEL_PRE_RUN_LAYER]: '',
    };
    await this.build(
      name,
      layerDockerfile(from, [{ path: r.releaseDir, owner: r.user }], labels),
      [r.releaseDir],
      r.user,
      `build the image of deployment ${r.deploymentId}`,
    );
    if (r.preRunLayer !== undefined) {
      // What the pre-run hook wrote, as one more layer at the release's path: copied over the
      // release, as the local sandbox's overlay shows it; packed as the app's user, like the release.
      await this.build(
        name,
        layerDockerfile(name, [{ path: r.preRunLayer, owner: r.user, target: r.releaseDir }], {
          ...labels,
          [LABEL_PRE_RUN_LAYER]: r.preRunLayer,
        }),
        [r.preRunLayer],
        r.user,
        `add the pre-run hook's layer to the image of deployment ${r.deploymentId}`,
        // What the hook removed from the release is marked in its layer by devices no build can copy.
        { withoutWhiteouts: true },
      );
    }
    const pinned = pinnedName(name, await pushImage(this.o.api, name, this.o.registry));
    this.o.log(`release image ${name} built and pushed as ${pinned}`);
    return pinned;
  }

  /** Whether this node holds the release's image, of the same release folder and pre-run layer. */
  private async builtBefore(name: string, r: ReleaseImageRequest): Promise<boolean> {
    const image = await this.o.api
      .json<{ Config?: { Labels?: Record<string, string> } }>({ path: `/images/${name}/json`, what: 'inspect a release image' })
      .catch(() => undefined);
    const labels = image?.Config?.Labels;
    return labels?.[LABEL_RELEASE_DIR] === r.releaseDir && (labels[LABEL_PRE_RUN_LAYER] ?? '') === (r.preRunLayer ?? '');
  }

  private async toolchainImage(paths: string[]): Promise<string> {
    const key = await fingerprint(paths);
    let pending = this.toolchains.get(key);
    if (!pending) {
      pending = (async () => {
        const name = `${this.address}/${SHARED_NAMESPACE}/toolchains:${key}`;
        if (await imageExists(this.o.api, name)) return name;
        const base = await this.ensureBase();
        this.o.log(`building the toolchains layer ${name}`);
        const root = { uid: 0, gid: 0 };
        await this.build(
          name,
          layerDockerfile(
            base,
            paths.map((path) => ({ path, owner: root })),
            {},
          ),
          paths,
          undefined,
          'build the toolchains layer',
        );
        return name;
      })();
      this.toolchains.set(key, pending);
      pending.catch(() => this.toolchains.delete(key));
    }
    return pending;
  }

  /**
   * Removes the release images whose release folder is gone, of one app or of all: the deployer
   * prunes release folders to the kept-releases count and deleting an app removes them all, and
   * the images follow, locally and in the registry. An image without its folder serves nothing
   * (a rollback needs the folder too). Forced: the container of a service just removed may
   * linger a moment, and Docker keeps the layers of an image a container still uses.
   */
  /**
   * Ended task containers of an image: Swarm removes those of a removed service a while after,
   * and until then a forced image removal only takes the tag away, leaving the image's layers.
   */
  private async removeEndedContainersOf(imageId: string): Promise<void> {
    const ended = await this.o.api.json<Array<{ Id: string }>>({
      path: '/containers/json',
      query: { all: true, filters: JSON.stringify({ ancestor: [imageId], status: ['created', 'exited', 'dead'] }) },
      what: 'list the ended containers of an old release image',
    });
    for (const container of ended) {
      await this.o.api
        .json({ method: 'DELETE', path: `/containers/${container.Id}`, what: 'remove an ended task container' })
        .catch(() => undefined);
    }
  }

  async pruneApp(appId?: string): Promise<string[]> {
    const images = await this.o.api.json<Array<{ Id: string; RepoTags?: string[]; Labels?: Record<string, string> }>>({
      path: '/images/json',
      query: { filters: JSON.stringify({ label: [appId === undefined ? LABEL_RELEASE_DIR : `${LABEL_APP}=${appId}`] }) },
      what: 'list release images',
    });
    const removed: string[] = [];
    for (const image of images) {
      const dir = image.Labels?.[LABEL_RELEASE_DIR];
      // The release folder is of the platform's own layout: checking that it exists is safe.
      if (!dir || existsSync(dir)) continue;
      try {
        await this.removeEndedContainersOf(image.Id);
        await this.o.api.json({
          method: 'DELETE',
          path: `/images/${image.Id}`,
          query: { force: true },
          what: 'remove an old release image',
        });
      } catch {
        continue;
      }
      for (const tag of image.RepoTags ?? []) {
        if (tag.startsWith(`${this.address}/`)) await this.o.registry.deleteTag(tag.slice(this.address.length + 1)).catch(() => undefined);
        removed.push(tag);
      }
      for (const [key] of this.releases) if (key.endsWith(`\n${dir}`)) this.releases.delete(key);
    }
    return removed;
  }

  /**
   * Packs the context into a file first, then sends it with its length: streamed in chunks,
   * dockerd may answer and close the connection before the tar padding is sent, and the build
   * fails with a reset connection.
   */
  private async build(
    name: string,
    dockerfile: string,
    folders: string[],
    readAs: { uid: number; gid: number } | undefined,
    what: string,
    options: { withoutWhiteouts?: boolean } = {},
  ): Promise<void> {
    const dir = mkdtempSync(join(tmpdir(), 'slipway-context-'));
    try {
      const file = join(dir, 'context.tar');
      const context = buildContext(dockerfile, folders, readAs, options);
      await Promise.all([pipeline(context.stream, createWriteStream(file, { mode: 0o600 })), context.done]);
      await this.o.api.progress({
        method: 'POST',
        path: '/build',
        query: { t: name, dockerfile: context.dockerfile, rm: true, forcerm: true, networkmode: 'none', pull: false },
        stream: createReadStream(file),
        headers: { 'content-type': 'application/x-tar', 'content-length': String(statSync(file).size) },
        what,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

/** Docker repository names are lowercase letters and digits joined by `.`, `_`, `__` or dashes. */
export function repositoryName(appId: string): string {
  if (/^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/.test(appId) && appId.length <= 128) return appId;
  const name = appId
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 100);
  return `${name || 'app'}-${createHash('sha256').update(appId).digest('hex').slice(0, 8)}`;
}

/** Tags: letters, digits, `_`, `.`, `-`, at most 128 characters. */
export function tagName(deploymentId: string): string {
  const tag = deploymentId.replace(/[^A-Za-z0-9_.-]/g, '-').replace(/^[.-]+/, '');
  return tag === deploymentId && tag.length <= 128
    ? tag
    : `${tag.slice(0, 100) || 'd'}-${createHash('sha256').update(deploymentId).digest('hex').slice(0, 12)}`;
}

/**
 * Names the content of the toolchain folders by every file's path, size and modification time:
 * a new Node or JDK in the cache makes a new layer, an unchanged cache reuses the old one.
 */
export async function fingerprint(paths: string[]): Promise<string> {
  const hash = createHash('sha256');
  for (const path of [...paths].sort()) {
    hash.update(`${path}\n`);
    const listing = await runChecked(['find', path, '-printf', '%P\\t%y\\t%s\\t%T@\\n'], {
      maxOutputBytes: 512 * 1024 * 1024,
      env: { PATH: '/usr/bin:/bin', LC_ALL: 'C' },
      timeoutMs: 10 * 60_000,
    });
    hash.update(listing.stdout.split('\n').sort().join('\n'));
  }
  return hash.digest('hex').slice(0, 16);
}
