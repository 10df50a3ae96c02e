import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SandboxBucket } from '../../sandbox/sandbox-identity.js';
import { CommandFailedError, runChecked } from '../../executor/run-captured.js';
import { launchDetached } from '../../executor/launch-detached.js';
import { readPidFile } from '../../executor/pid-file.js';
import { SYSTEM_TOOL_ENV } from '../../executor/system-tools.js';
import { mountSourceOf } from '../../storage/mount-table.js';
import { BucketCertificates } from './bucket-tls.js';
import {
  bucketVolumeName,
  GLUSTERD_PORT,
  glusterCli,
  glusterdScript,
  glusterdVolfile,
  type GlusterFolders,
  inGlusterdNamespace,
  namespaceMountArgv,
  SERVER_CERT_NAME,
  VOLUME_PREFIX,
  volumeOptions,
} from './bucket-server-config.js';

const GLUSTERD = '/usr/sbin/glusterd';
const READY_TIMEOUT_MS = 30_000;
/** How often the server and the bricks of the buckets served are checked (and started again). */
const WATCH_INTERVAL_MS = 3_000;

/** What a node needs to mount one bucket: the server, the volume, and the bucket's certificate. */
export interface BucketExport {
  volume: string;
  host: string;
  /** The bucket's certificate and key (PEM): handed to the nodes' holder containers only. */
  cert: string;
  key: string;
  /** The CA the holder checks the server against. */
  ca: string;
}

export interface BucketServerOptions {
  /** The address of this machine the nodes reach: glusterd and the bricks listen there only. */
  host: string;
  /** Root-only folder of glusterd's state, logs, certificates and the CA (`<data>/fs-buckets/gluster`). */
  stateDir: string;
  log(line: string): void;
}

/**
 * The control machine's side of FS buckets on Swarm: a GlusterFS server of the daemon's own on
 * the address the nodes reach. Each bucket is a volume whose one brick is the bucket's mount
 * (its ext4 image, unchanged: size, group, backups and restores are the bucket's own), served
 * over TLS to the holder of its certificate only. glusterd runs in a mount namespace of its own,
 * its folders bound over the fixed paths GlusterFS uses, so nothing of it is in the machine's
 * /var/lib/glusterd or /usr/lib/ssl. glusterd and its bricks outlive the daemon, as the buckets'
 * mounts do: the nodes keep their mounts across a daemon restart.
 */
export class BucketServer {
  private server: Promise<number> | undefined;
  private readonly exports = new Map<string, Promise<BucketExport>>();
  private watchTimer: NodeJS.Timeout | undefined;
  private watching: Promise<void> | undefined;
  private readonly certificates: BucketCertificates;

  constructor(private readonly o: BucketServerOptions) {
    this.certificates = new BucketCertificates(join(o.stateDir, 'ca'));
  }

  /**
   * The bucket served (its volume made and started once), the server running, and the brick on
   * the bucket's current filesystem: checked at every task start, since a restore in place gives
   * the bucket a new image and the app's restart is what should serve it. One check at a time
   * per bucket: the instances of a release start together.
   */
  ensure(bucket: SandboxBucket): Promise<BucketExport> {
    this.watchTimer ??= setInterval(() => {
      this.watching ??= this.keepServing()
        .catch((e: Error) => this.o.log(`FS buckets' GlusterFS server: ${e.message}`))
        .finally(() => (this.watching = undefined));
    }, WATCH_INTERVAL_MS).unref();
    const earlier = this.exports.get(bucket.source);
    const pending = earlier
      ? earlier.then((exported) => this.servedFromCurrentFilesystem(bucket, exported))
      : this.ensureServer().then((pid) => this.exportBucket(pid, bucket));
    this.exports.set(bucket.source, pending);
    pending.catch(() => this.exports.delete(bucket.source));
    return pending;
  }

  /** A bucket already served: its brick moved onto the bucket's filesystem if that changed. */
  private async servedFromCurrentFilesystem(bucket: SandboxBucket, exported: BucketExport): Promise<BucketExport> {
    const pid = await this.ensureServer();
    if (await this.showInNamespace(pid, bucket.source, exported.volume)) {
      await this.gluster(pid, ['volume', 'start', exported.volume, 'force']);
      this.o.log(`the FS bucket ${exported.volume} is served from its new filesystem`);
    }
    return exported;
  }

  /**
   * The platform stops (the nodes' holders are gone): the bricks stop, so the buckets' mounts can
   * be let go, and glusterd ends. The volumes stay defined: the next start serves them again.
   */
  async stop(): Promise<void> {
    clearInterval(this.watchTimer);
    this.watchTimer = undefined;
    await this.watching;
    for (const pending of this.exports.values()) await pending.catch(() => undefined);
    this.exports.clear();
    const pid = await this.runningPid();
    if (pid) {
      await this.removeDeleted(pid).catch((e: Error) => this.o.log(`FS buckets' server: ${e.message}`));
      // Every brick, those an earlier daemon's buckets started included: they hold the buckets' filesystems.
      for (const volume of await this.bucketVolumes(pid).catch(() => []))
        await this.gluster(pid, ['volume', 'stop', volume]).catch(() => undefined);
      process.kill(pid, 'SIGTERM');
    }
    this.server = undefined;
  }

  private get folders(): GlusterFolders {
    return {
      state: join(this.o.stateDir, 'state'),
      logs: join(this.o.stateDir, 'logs'),
      run: join(this.o.stateDir, 'run'),
      tls: join(this.o.stateDir, 'tls'),
    };
  }

  private get volfile(): string {
    return join(this.o.stateDir, 'glusterd.vol');
  }

  private get pidFile(): string {
    return join(this.o.stateDir, 'glusterd.pid');
  }

  private gluster(pid: number, args: string[]) {
    return runChecked(glusterCli(pid, args), { cwd: '/', env: SYSTEM_TOOL_ENV, timeoutMs: 60_000 });
  }

  private inNamespace(pid: number, argv: string[]) {
    return runChecked(inGlusterdNamespace(pid, argv), { cwd: '/', env: SYSTEM_TOOL_ENV, timeoutMs: 60_000 });
  }

  /** The volumes of buckets glusterd knows (this run's and earlier ones'). */
  private async bucketVolumes(pid: number): Promise<string[]> {
    const listed = await this.gluster(pid, ['volume', 'list']);
    return listed.stdout
      .split('\n')
      .map((l) => l.trim())
      .filter((volume) => volume.startsWith(VOLUME_PREFIX));
  }

  private ensureServer(): Promise<number> {
    this.server ??= (async () => {
      if (!existsSync(GLUSTERD))
        throw new Error(
          `FS buckets on Swarm need ${GLUSTERD} on this machine (Debian package glusterfs-server; ./dev setup installs it): the nodes mount each bucket from it.`,
        );
      mkdirSync(this.o.stateDir, { recursive: true, mode: 0o700 });
      for (const dir of Object.values(this.folders)) mkdirSync(dir, { recursive: true, mode: 0o700 });
      // The mount points of glusterd's namespace: the package makes them, an operator may have removed them.
      for (const dir of ['/var/lib/glusterd', '/var/log/glusterfs', '/run/gluster']) mkdirSync(dir, { recursive: true, mode: 0o755 });
      const { cert, key, ca } = await this.certificates.issue(SERVER_CERT_NAME);
      writeFileSync(join(this.folders.tls, 'glusterfs.pem'), cert, { mode: 0o600 });
      writeFileSync(join(this.folders.tls, 'glusterfs.key'), key, { mode: 0o600 });
      writeFileSync(join(this.folders.tls, 'glusterfs.ca'), ca, { mode: 0o600 });
      // TLS on glusterd's own port too: without a certificate of this CA nobody reads a volfile or probes it.
      writeFileSync(join(this.folders.state, 'secure-access'), '', { mode: 0o600 });
      const config = glusterdVolfile(this.o.host);
      const previous = existsSync(this.volfile) ? readFileSync(this.volfile, 'utf8') : '';
      writeFileSync(this.volfile, config, { mode: 0o600 });
      const script = join(this.o.stateDir, 'glusterd.sh');
      writeFileSync(script, glusterdScript(this.folders, this.volfile), { mode: 0o700 });
      let pid = await this.runningPid();
      if (pid && previous !== config) {
        // Another address: glusterd starts again there (its bricks follow it; the nodes' mounts reconnect).
        process.kill(pid, 'SIGTERM');
        pid = undefined;
      }
      if (!pid) {
        const launched = await launchDetached({
          argv: ['unshare', '--mount', '--propagation', 'private', '/bin/sh', script],
          cwd: '/',
          env: SYSTEM_TOOL_ENV,
          settleMs: 1_000,
        });
        if (launched.state === 'exited')
          throw new Error(
            `The FS buckets' GlusterFS server did not start (glusterd exited ${launched.exitCode ?? launched.signal}); see ${this.folders.logs}/glusterd.log.`,
          );
        pid = launched.pid;
        writeFileSync(this.pidFile, `${pid}\n`, { mode: 0o600 });
        this.o.log(`the FS buckets' GlusterFS server listens on ${this.o.host}:${GLUSTERD_PORT} for the swarm nodes`);
      }
      await this.waitReady(pid);
      await this.removeDeleted(pid);
      return pid;
    })();
    this.server.catch(() => (this.server = undefined));
    return this.server;
  }

  /** glusterd answers its command socket (a second or two after its start). */
  private async waitReady(pid: number): Promise<void> {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      const failed = await this.gluster(pid, ['volume', 'list']).then(
        () => undefined,
        (e: Error) => e,
      );
      if (!failed) return;
      if (Date.now() > deadline || !(await this.runningPid()))
        throw new Error(
          `The FS buckets' GlusterFS server does not answer (${commandError(failed)}); see ${this.folders.logs}/glusterd.log (is ${this.o.host} an address of this machine, and port ${GLUSTERD_PORT} free there?).`,
        );
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /**
   * The volumes of buckets deleted since they were served: stopped and deleted, their mount in
   * glusterd's namespace let go (the image's blocks with it). A bucket is deleted when its image
   * is gone from the buckets' folder.
   */
  private async removeDeleted(pid: number): Promise<void> {
    for (const volume of await this.bucketVolumes(pid)) {
      const info = await this.gluster(pid, ['volume', 'info', volume]);
      const brick = /^Brick1: [^:]+:(\/.+)$/m.exec(info.stdout)?.[1];
      if (!brick || existsSync(`${brick}.img`)) continue;
      await this.gluster(pid, ['volume', 'stop', volume, 'force']).catch(() => undefined);
      await this.gluster(pid, ['volume', 'delete', volume]);
      await this.inNamespace(pid, ['umount', '-l', brick]).catch(() => undefined);
      this.o.log(`the GlusterFS volume ${volume} of a deleted FS bucket is removed`);
    }
  }

  /**
   * The server is the daemon's to keep up, as an add-on server is: a glusterd that died is
   * started again (it starts the bricks of the started volumes that are not running), and a
   * brick that died is started again; the nodes' clients reconnect to it by themselves.
   */
  private async keepServing(): Promise<void> {
    if (this.exports.size === 0) return;
    if (!(await this.runningPid())) {
      this.o.log("the FS buckets' GlusterFS server (glusterd) is not running; starting it again");
      this.server = undefined;
    }
    const pid = await this.ensureServer();
    for (const pending of [...this.exports.values()]) {
      const exported = await pending.catch(() => undefined);
      if (!exported || (await this.brickRunning(exported.volume))) continue;
      this.o.log(`the brick of the FS bucket ${exported.volume} is not running; starting it again`);
      await this.gluster(pid, ['volume', 'start', exported.volume, 'force']);
    }
  }

  /** A brick's pid file (glusterd writes it in its run folder) names a live brick process. */
  private async brickRunning(volume: string): Promise<boolean> {
    const dir = join(this.folders.run, 'vols', volume);
    const names = await readdir(dir).catch(() => []);
    for (const name of names.filter((n) => n.endsWith('.pid')))
      if ((await processOfPidFile(join(dir, name)))?.cmdline.startsWith('/usr/sbin/glusterfsd')) return true;
    return false;
  }

  /** The glusterd an earlier start left, when it is still this config's. */
  private async runningPid(): Promise<number | undefined> {
    const found = await processOfPidFile(this.pidFile);
    return found?.cmdline.includes(this.volfile) ? found.pid : undefined;
  }

  private async exportBucket(pid: number, bucket: SandboxBucket): Promise<BucketExport> {
    const volume = bucketVolumeName(bucket.source);
    const known = await this.gluster(pid, ['volume', 'info', volume]).then(
      () => true,
      () => false,
    );
    // The brick serves the bucket's filesystem, never the folder under it: mounted in glusterd's
    // namespace first (again when the bucket got another image: a restore in place).
    if (await this.showInNamespace(pid, bucket.source, known ? volume : undefined))
      this.o.log(`the FS bucket ${volume} is mounted in the GlusterFS server's namespace`);
    if (!known) {
      // The brick is the bucket's mount itself (`force`: GlusterFS prefers a folder below a mount
      // point); a copy restored --as another bucket carries its source's volume id, which this replaces.
      await this.gluster(pid, ['volume', 'create', volume, `${this.o.host}:${bucket.source}`, 'force']);
      for (const [option, value] of volumeOptions(volume)) await this.gluster(pid, ['volume', 'set', volume, option, value]);
    }
    // `force` starts a brick that is not running (after a reboot or a crash) and leaves a running one be.
    await this.gluster(pid, ['volume', 'start', volume, 'force']).catch((e: Error) => {
      throw new Error(`The FS bucket's GlusterFS volume ${volume} does not start (${commandError(e)}); see ${this.folders.logs}/bricks.`);
    });
    const { cert, key, ca } = await this.certificates.issue(volume);
    return { volume, host: this.o.host, cert, key, ca };
  }

  /**
   * glusterd's namespace is private: a bucket mounted on the host after it started is not there,
   * and nothing mounted there reaches the host or the sandboxes. So the bucket's filesystem is
   * mounted there too, from the host mount's own loop device (the same filesystem, not a copy);
   * when the host's mount is another filesystem than the namespace's (a restore in place gave the
   * bucket a new image), the volume stops, the old mount goes and the new one takes its place.
   * True when it mounted.
   */
  private async showInNamespace(pid: number, source: string, volume: string | undefined): Promise<boolean> {
    const device = mountSourceOf(readFileSync('/proc/self/mountinfo', 'utf8'), source);
    if (!device?.startsWith('/dev/loop'))
      throw new Error(`The FS bucket's filesystem is not mounted at ${source}: it cannot be served to the swarm nodes.`);
    const seen = await this.inNamespace(pid, ['stat', '-c', '%d', source]).then(
      (r) => Number(r.stdout.trim()),
      () => undefined,
    );
    if (seen === statSync(source).dev) return false;
    const mounted = await this.inNamespace(pid, ['mountpoint', '-q', source]).then(
      () => true,
      () => false,
    );
    if (mounted) {
      if (volume) await this.gluster(pid, ['volume', 'stop', volume, 'force']).catch(() => undefined);
      await this.inNamespace(pid, ['umount', '-l', source]);
    }
    await this.inNamespace(pid, namespaceMountArgv(device, source));
    return true;
  }
}

/** The live process a pid file names, with its command line; undefined when either is gone. */
async function processOfPidFile(path: string): Promise<{ pid: number; cmdline: string } | undefined> {
  const pid = await readPidFile(path);
  if (pid === undefined) return undefined;
  return readFile(`/proc/${pid}/cmdline`, 'utf8').then(
    (cmdline) => ({ pid, cmdline }),
    () => undefined,
  );
}

/** What the gluster command said on failure (its own words, about glusterd's state: never a tenant's file). */
function commandError(error: Error): string {
  const said = error instanceof CommandFailedError ? `${error.stdout} ${error.stderr}` : error.message;
  return said.trim().replace(/\s+/g, ' ').slice(0, 300) || error.message;
}
