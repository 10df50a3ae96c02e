/**
 * What carries an FS bucket to the tasks of every node, as data: the control machine's GlusterFS
 * server (a glusterd of the daemon's own, in a mount namespace of its own, each bucket a volume
 * whose one brick is the bucket's mount), and the nodes' side (a glusterfs FUSE mount held by a
 * container of the node, in a Docker volume the tasks mount). Kept apart so the config, the
 * scripts and the mounts are tested as text and arrays.
 */
import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { BUCKET_MOUNT_OPTIONS } from '../../sandbox/sandbox-identity.js';
import { shellQuote } from '../../executor/shell-quote.js';

/** glusterd's own port: its bricks find it there, so it cannot move (only its address can). */
export const GLUSTERD_PORT = 24007;
/** The bricks' ports, one per bucket in use: what a firewall between the nodes and this machine opens. */
export const BRICK_PORTS = { base: 49152, max: 49651 } as const;
/** Every bucket's volume (and its certificate's name) starts so. */
export const VOLUME_PREFIX = 'slbgl-';
/** The name of the server's own certificate: no bucket's volume can have it. */
export const SERVER_CERT_NAME = 'slipway-buckets-server';
/** Where the holder container mounts the bucket (the node's volume folder, bound rshared). */
export const HOLDER_MOUNT = '/mnt/bucket';
/**
 * Where GlusterFS reads its TLS files (fixed when Debian built it), in the holder and in
 * glusterd's namespace: `glusterfs.pem`, `glusterfs.key`, `glusterfs.ca`.
 */
export const GLUSTER_TLS_DIR = '/usr/lib/ssl';
/** The folder whose `secure-access` file turns TLS on for glusterd's own connections (also fixed). */
export const GLUSTER_STATE_DIR = '/var/lib/glusterd';

/** The volume of a bucket, from its folder on the control machine (`<data>/fs-buckets/<add-on id>`). */
export function bucketVolumeName(source: string): string {
  return `${VOLUME_PREFIX}${createHash('sha256').update(basename(source)).digest('hex').slice(0, 12)}`;
}

/** `--swarm-bucket-server <address>`: the address of this machine the swarm nodes reach. */
export function parseBucketServerAddress(value: string, flag = '--swarm-bucket-server'): string {
  const match = /^(\d{1,3}(?:\.\d{1,3}){3})$/.exec(value);
  if (!match || match[1]!.split('.').some((n) => Number(n) > 255) || match[1]!.startsWith('127.') || match[1] === '0.0.0.0')
    throw new Error(
      `${flag} must be an IPv4 address of this machine that the swarm nodes reach (e.g. 10.0.0.1; not a loopback one), not ${JSON.stringify(value)}.`,
    );
  return match[1]!;
}

/**
 * The older `--swarm-bucket-sftp <address:port>` (SFTP carried buckets before): its address is
 * the server's, its port no longer used.
 */
export function addressOfSftpListen(value: string): string {
  const match = /^([^:]+):\d{1,5}$/.exec(value);
  return parseBucketServerAddress(match ? match[1]! : value, '--swarm-bucket-sftp');
}

/** The folders of glusterd's namespace: each bound over the fixed path GlusterFS uses. */
export interface GlusterFolders {
  /** Its state (volumes, peers): bound at /var/lib/glusterd. */
  state: string;
  /** Its logs and the bricks': bound at /var/log/glusterfs. */
  logs: string;
  /** Its sockets and pid files: bound at /run/gluster. */
  run: string;
  /** The server's certificate, key and the CA: bound at /usr/lib/ssl (nothing else of the system's is needed there). */
  tls: string;
}

/**
 * glusterd's own volfile: listening on the given address only, its command socket in its run
 * folder (not the machine's /run/glusterd.socket, which a glusterd of the operator's may use),
 * its bricks' ports in the range the documentation names.
 */
export function glusterdVolfile(address: string): string {
  return [
    'volume management',
    '    type mgmt/glusterd',
    `    option working-directory ${GLUSTER_STATE_DIR}`,
    '    option transport-type socket',
    `    option transport.socket.bind-address ${address}`,
    `    option transport.socket.listen-port ${GLUSTERD_PORT}`,
    '    option glusterd-sockfile /run/gluster/glusterd.socket',
    `    option base-port ${BRICK_PORTS.base}`,
    `    option max-port ${BRICK_PORTS.max}`,
    '    option ping-timeout 0',
    '    option event-threads 1',
    'end-volume',
    '',
  ].join('\n');
}

/**
 * The script glusterd starts from, in a mount namespace of its own (`unshare -m`, private: no
 * mount of its own reaches the host or the sandboxes, and the buckets are mounted there
 * explicitly, bucket-server.ts): its folders bound over GlusterFS's fixed paths, then glusterd
 * in the foreground. Its bricks are its children, in the same namespace.
 */
export function glusterdScript(folders: GlusterFolders, volfile: string): string {
  return [
    'set -eu',
    `mount --bind ${shellQuote(folders.state)} ${GLUSTER_STATE_DIR}`,
    `mount --bind ${shellQuote(folders.logs)} /var/log/glusterfs`,
    `mount --bind ${shellQuote(folders.run)} /run/gluster`,
    `mount --bind ${shellQuote(folders.tls)} ${GLUSTER_TLS_DIR}`,
    `exec glusterd -N -f ${shellQuote(volfile)}`,
    '',
  ].join('\n');
}

/** A command run inside glusterd's mount namespace. */
export function inGlusterdNamespace(glusterdPid: number, argv: string[]): string[] {
  return ['nsenter', '-t', String(glusterdPid), '-m', ...argv];
}

/**
 * A bucket's filesystem mounted in glusterd's namespace from the loop device the host's mount is
 * on (the same filesystem, not a copy), with the flags it has on the host.
 */
export function namespaceMountArgv(device: string, folder: string): string[] {
  return ['mount', '-t', 'ext4', '-o', BUCKET_MOUNT_OPTIONS, device, folder];
}

/** The `gluster` command line, run inside glusterd's namespace, talking to its socket. */
export function glusterCli(glusterdPid: number, args: string[]): string[] {
  return inGlusterdNamespace(glusterdPid, ['gluster', '--mode=script', '--glusterd-sock=/run/gluster/glusterd.socket', ...args]);
}

/**
 * A bucket's volume settings: TLS both ways with the server's certificate, only the bucket's own
 * certificate admitted, root squashed (no task runs as root; the holders never write), and no
 * NFS of Gluster's own.
 */
export function volumeOptions(volume: string): Array<[string, string]> {
  return [
    ['ssl.own-cert', `${GLUSTER_TLS_DIR}/glusterfs.pem`],
    ['ssl.private-key', `${GLUSTER_TLS_DIR}/glusterfs.key`],
    ['ssl.ca-list', `${GLUSTER_TLS_DIR}/glusterfs.ca`],
    ['client.ssl', 'on'],
    ['server.ssl', 'on'],
    ['auth.ssl-allow', volume],
    ['server.root-squash', 'on'],
    ['nfs.disable', 'on'],
  ];
}

/**
 * The holder's script (sh, in the glusterfs-client image): the bucket's certificate, key and
 * the CA from its environment into tmpfs folders at GlusterFS's fixed paths, TLS turned on for
 * glusterd's connection too (`secure-access`), a dead mount of an earlier holder let go, then the
 * FUSE client in the foreground; it says `<marker> mounted` once the mount is there (a client the
 * server refuses exits, leaving no mount: the script checks the mount table, never the exit
 * status alone) and lives as long as the client. `--acl`: the bucket's default ACL keeps files
 * shared between apps, as on one machine.
 */
export function holderScript(marker: string): string {
  return [
    'set -u',
    'umask 077',
    `printf '%s\\n' "$SLIPWAY_BUCKET_CERT" > ${GLUSTER_TLS_DIR}/glusterfs.pem`,
    `printf '%s\\n' "$SLIPWAY_BUCKET_KEY" > ${GLUSTER_TLS_DIR}/glusterfs.key`,
    `printf '%s\\n' "$SLIPWAY_BUCKET_CA" > ${GLUSTER_TLS_DIR}/glusterfs.ca`,
    `: > ${GLUSTER_STATE_DIR}/secure-access`,
    // Only a FUSE mount: the folder itself is the volume's bind, which must stay (rshared).
    `if grep -q " ${HOLDER_MOUNT} fuse" /proc/self/mounts; then umount -l ${HOLDER_MOUNT}; fi`,
    `glusterfs ${glusterfsOptions().join(' ')} --volfile-server="$SLIPWAY_BUCKET_SERVER" --volfile-id="$SLIPWAY_BUCKET_VOLUME" ${HOLDER_MOUNT} &`,
    'pid=$!',
    // Docker's stop: the mount goes first, so no dead mount is left in the node's volume.
    `trap 'umount -l ${HOLDER_MOUNT}; kill $pid 2>/dev/null; exit 0' TERM INT`,
    'i=0',
    'while [ $i -lt 300 ]; do',
    `  if grep -q " ${HOLDER_MOUNT} fuse.glusterfs " /proc/self/mounts; then echo "${marker} mounted"; wait $pid; exit $?; fi`,
    '  kill -0 $pid 2>/dev/null || { wait $pid; exit $?; }',
    '  sleep 0.1; i=$((i + 1))',
    'done',
    'exit 1',
    '',
  ].join('\n');
}

/**
 * The FUSE client's options: in the foreground, its log on standard error (what a refused mount
 * says reaches the daemon), ACLs, nodev and nosuid on the mount (a device node or set-uid file is
 * inert in every task), and no caching of names or attributes, so a task sees at once what a
 * task of another node wrote.
 */
export function glusterfsOptions(): string[] {
  return [
    '-N',
    '--acl',
    '--fuse-mountopts=nodev,nosuid',
    '--log-file=/dev/stderr',
    '--log-level=WARNING',
    '--attribute-timeout=0',
    '--entry-timeout=0',
    '--negative-timeout=0',
  ];
}

/** The holder's tmpfs folders: GlusterFS's fixed paths, empty but for what the script writes. */
export const HOLDER_TMPFS = [GLUSTER_TLS_DIR, GLUSTER_STATE_DIR, '/var/log/glusterfs', '/run/gluster', '/tmp'];

/**
 * The Docker volume a bucket is in on every node, one per app: each app's tasks go through a
 * client of their own, so the client's permission cache never answers one app with what it
 * learnt for another (an app may keep files of its own from the others).
 */
export function nodeBucketVolume(owner: string, volume: string, uid: number): string {
  return `${owner}-${volume}-u${uid}`;
}

/**
 * A task's mount of the bucket: the node's volume, which the holder's mount fills. Should the
 * volume be missing on the node (no holder there), Docker would make an empty one and the app
 * would write where nothing lasts: the driver options name a folder that does not exist, so the
 * task fails to start instead (an existing volume is used as it is).
 */
export function taskBucketMount(owner: string, source: string, uid: number, target: string): Record<string, unknown> {
  return {
    Type: 'volume',
    Source: nodeBucketVolume(owner, bucketVolumeName(source), uid),
    Target: target,
    VolumeOptions: {
      NoCopy: true,
      DriverConfig: {
        Name: 'local',
        Options: { type: 'none', o: 'bind', device: '/nonexistent/slipway-fs-bucket-not-mounted-on-this-node' },
      },
    },
  };
}
