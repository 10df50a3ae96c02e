import { randomBytes } from 'node:crypto';
import { baseImageTag, debianSuite, importBaseImage } from './base-image.js';
import { HOLDER_MOUNT, HOLDER_TMPFS, holderScript, nodeBucketVolume } from './bucket-server-config.js';
import type { BucketExport } from './bucket-server.js';
import { DockerApiError, type DockerApi } from './docker-api.js';
import { imageExists, pullImage, pushImage } from './image-transfer.js';
import { LogFrameReader } from './log-frames.js';
import type { RegistryAccess } from './registry.js';
import { LABEL_OWNER } from './service-spec.js';

/** The holder's image: GlusterFS's FUSE client, from Debian, nothing else. */
export const HOLDER_PACKAGES = ['glusterfs-client'];
const MOUNT_TIMEOUT_MS = 30_000;

export interface NodeBucketMountsOptions {
  manager: DockerApi;
  registry: RegistryAccess;
  owner: string;
  log(line: string): void;
}

/**
 * The nodes' side of FS buckets on Swarm: on each node, a bucket is a Docker volume per app that
 * a holder container of the node fills with a GlusterFS mount of the control machine's volume
 * (bucket-server.ts), as the app's tasks go through it (each app a client of its own). The holder
 * runs in the node's network and process namespaces with CAP_SYS_ADMIN and /dev/fuse only, binds the volume's folder rshared so its mount reaches the node (and the
 * tasks that mount the volume), and is restarted by Docker (the node's reboot included). Tasks
 * themselves get no capability and no device: they mount the volume like any other.
 */
/** Tries at removing a volume still in use by a task that is ending (half a second apart). */
const VOLUME_REMOVAL_ATTEMPTS = 30;

export class NodeBucketMounts {
  private image: Promise<string> | undefined;
  /** One check or mount at a time per node and bucket: instances of a release start together. */
  private readonly pending = new Map<string, Promise<void>>();

  constructor(private readonly o: NodeBucketMountsOptions) {}

  /** The bucket mounted on the node (its holder running and its mount there); throws saying why not. */
  ensure(nodeId: string, api: DockerApi, bucket: BucketExport, uid: number): Promise<void> {
    const key = `${nodeId}\n${bucket.volume}\n${uid}`;
    let pending = this.pending.get(key);
    if (!pending) {
      pending = this.mount(nodeId, api, bucket, uid).finally(() => this.pending.delete(key));
      this.pending.set(key, pending);
    }
    return pending;
  }

  private async mount(nodeId: string, api: DockerApi, bucket: BucketExport, uid: number): Promise<void> {
    const volume = nodeBucketVolume(this.o.owner, bucket.volume, uid);
    const name = volume;
    try {
      const found = await api.json<{ State: { Running: boolean } }>({ path: `/containers/${name}/json`, what: 'inspect a bucket holder' });
      if (found.State.Running) return;
      await api.json({ method: 'DELETE', path: `/containers/${name}`, query: { force: true }, what: 'remove a stopped bucket holder' });
    } catch (e) {
      if (!(e instanceof DockerApiError && e.status === 404)) throw e;
    }
    const image = await this.ensureImage();
    await pullImage(api, image, this.o.registry, `swarm node ${nodeId}`);
    const made = await api.json<{ Mountpoint: string }>({
      method: 'POST',
      path: '/volumes/create',
      body: { Name: volume, Labels: { [LABEL_OWNER]: this.o.owner } },
      what: `create the volume of an FS bucket on swarm node ${nodeId}`,
    });
    const marker = `slipway-${randomBytes(6).toString('hex')}`;
    const { Id: id } = await api.json<{ Id: string }>({
      method: 'POST',
      path: '/containers/create',
      query: { name },
      body: {
        Image: image,
        Cmd: ['/bin/sh', '-c', holderScript(marker)],
        Env: [
          `SLIPWAY_BUCKET_CERT=${bucket.cert.trim()}`,
          `SLIPWAY_BUCKET_KEY=${bucket.key.trim()}`,
          `SLIPWAY_BUCKET_CA=${bucket.ca.trim()}`,
          `SLIPWAY_BUCKET_SERVER=${bucket.host}`,
          `SLIPWAY_BUCKET_VOLUME=${bucket.volume}`,
        ],
        Labels: { [LABEL_OWNER]: this.o.owner, 'slipway.role': 'bucket-holder' },
        HostConfig: {
          NetworkMode: 'host',
          // The client reads each caller's groups from /proc/<pid>/status (FUSE gives it the uid
          // and gid only): it must see the tasks' processes, whose bucket group opens the bucket.
          PidMode: 'host',
          CapDrop: ['ALL'],
          CapAdd: ['CAP_SYS_ADMIN'],
          Devices: [{ PathOnHost: '/dev/fuse', PathInContainer: '/dev/fuse', CgroupPermissions: 'rwm' }],
          ReadonlyRootfs: true,
          RestartPolicy: { Name: 'unless-stopped' },
          Mounts: [
            { Type: 'bind', Source: made.Mountpoint, Target: HOLDER_MOUNT, BindOptions: { Propagation: 'rshared' } },
            ...HOLDER_TMPFS.map((target) => ({ Type: 'tmpfs', Target: target, TmpfsOptions: { SizeBytes: 4 * 1024 * 1024, Mode: 0o700 } })),
          ],
        },
      },
      what: `create the holder of an FS bucket on swarm node ${nodeId}`,
    });
    await api.json({ method: 'POST', path: `/containers/${id}/start`, what: `start the holder of an FS bucket on swarm node ${nodeId}` });
    await this.waitMounted(nodeId, api, id, marker);
    this.o.log(`swarm node ${nodeId}: FS bucket ${bucket.volume} mounted from GlusterFS in volume ${volume}`);
  }

  /** Stops the node's holders (their mounts go with them) and removes their volumes: the platform stops. */
  async removeAll(nodeId: string, api: DockerApi): Promise<void> {
    const holders = await api.json<Array<{ Id: string }>>({
      path: '/containers/json',
      query: { all: 'true', filters: JSON.stringify({ label: [`${LABEL_OWNER}=${this.o.owner}`, 'slipway.role=bucket-holder'] }) },
      what: 'list the bucket holders',
    });
    for (const { Id: id } of holders) {
      await api
        .json({ method: 'POST', path: `/containers/${id}/stop`, query: { t: 10 }, what: 'stop a bucket holder' })
        .catch(() => undefined);
      await api
        .json({ method: 'DELETE', path: `/containers/${id}`, query: { force: true }, what: 'remove a bucket holder' })
        .catch(() => undefined);
    }
    const { Volumes: volumes } = await api.json<{ Volumes: Array<{ Name: string }> | null }>({
      path: '/volumes',
      query: { filters: JSON.stringify({ label: [`${LABEL_OWNER}=${this.o.owner}`] }) },
      what: 'list the bucket volumes',
    });
    for (const { Name: name } of volumes ?? []) {
      // A task of a service just removed may hold the volume a few seconds more (Docker answers 409).
      for (let attempt = 1; ; attempt++) {
        const failed = await api.json({ method: 'DELETE', path: `/volumes/${name}`, what: 'remove a bucket volume' }).then(
          () => undefined,
          (e: Error) => e,
        );
        if (!failed) break;
        if (failed instanceof DockerApiError && failed.status === 409 && attempt < VOLUME_REMOVAL_ATTEMPTS) {
          await new Promise((resolve) => setTimeout(resolve, 500));
          continue;
        }
        this.o.log(`could not remove FS bucket volume ${name} on swarm node ${nodeId}: ${failed.message}`);
        break;
      }
    }
  }

  /** Waits for the holder's `mounted` line; an exit (the server refused, no /dev/fuse...) fails with what it printed. */
  private async waitMounted(nodeId: string, api: DockerApi, id: string, marker: string): Promise<void> {
    const deadline = Date.now() + MOUNT_TIMEOUT_MS;
    for (;;) {
      const lines = await this.output(api, id);
      if (lines.some((l) => l.trim() === `${marker} mounted`)) return;
      const state = await api.json<{ State: { Running: boolean; ExitCode: number } }>({
        path: `/containers/${id}/json`,
        what: 'inspect a bucket holder',
      });
      if (!state.State.Running || Date.now() > deadline) {
        await api
          .json({ method: 'DELETE', path: `/containers/${id}`, query: { force: true }, what: 'remove a bucket holder' })
          .catch(() => undefined);
        throw new Error(
          `Swarm node ${nodeId} could not mount an FS bucket from GlusterFS (${state.State.Running ? 'no mount within 30 s' : `glusterfs exited with ${state.State.ExitCode}`}: ${lines.join(' ').trim().slice(-300) || 'no output'}); check that the node reaches the address given to --swarm-bucket-server (ports 24007 and 49152-49651) and has /dev/fuse (docs/swarm.md, "FS buckets").`,
        );
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  private async output(api: DockerApi, id: string): Promise<string[]> {
    const lines: string[] = [];
    const res = await api.stream({
      path: `/containers/${id}/logs`,
      query: { stdout: true, stderr: true },
      what: "read a bucket holder's output",
    });
    const reader = new LogFrameReader((_stream, line) => lines.push(line));
    for await (const chunk of res) reader.push(chunk as Buffer);
    reader.end();
    return lines;
  }

  /** Built once from Debian packages on the manager and pushed for the nodes to pull. */
  private ensureImage(): Promise<string> {
    this.image ??= (async () => {
      const repository = `${this.o.registry.address}/slipway/bucket-holder`;
      const tag = baseImageTag(debianSuite(), HOLDER_PACKAGES);
      const name = `${repository}:${tag}`;
      if (!(await imageExists(this.o.manager, name))) await importBaseImage(this.o.manager, repository, tag, this.o.log, HOLDER_PACKAGES);
      await pushImage(this.o.manager, name, this.o.registry);
      return name;
    })();
    this.image.catch(() => (this.image = undefined));
    return this.image;
  }
}
