/**
 * What carries an FS bucket to the tasks of other nodes, as data: the control machine's SFTP
 * server (an sshd of the daemon's own, SFTP only, each bucket an account chrooted to it), and
 * the node's side (an sshfs mount held by a container of the node, in a Docker volume the tasks
 * mount). Kept apart so the commands and the config are tested as text and arrays.
 */
import { createHash } from 'node:crypto';
import { basename } from 'node:path';

/** Every bucket's account starts so: sshd's AllowUsers admits these and nobody else. */
export const SFTP_ACCOUNT_PREFIX = 'slbsftp-';
/** Where each account's chroot shows its bucket (the chroot itself must be root's and 0755). */
export const SFTP_FILES = 'files';
/** Where the holder container mounts the bucket (the node's volume folder, bound rshared). */
export const HOLDER_MOUNT = '/mnt/bucket';
/** The holder's tmpfs for its key and the server's host key. */
const HOLDER_SECRETS = '/run/sftp';

/** The account of a bucket, from its folder on the control machine (`<data>/fs-buckets/<add-on id>`). */
export function sftpAccount(source: string): string {
  return `${SFTP_ACCOUNT_PREFIX}${createHash('sha256').update(basename(source)).digest('hex').slice(0, 12)}`;
}

/** `--swarm-bucket-sftp <address:port>`: where the nodes reach the control machine's SFTP server. */
export function parseSftpListen(value: string): { host: string; port: number } {
  const match = /^(\d{1,3}(?:\.\d{1,3}){3}):(\d{1,5})$/.exec(value);
  const port = Number(match?.[2]);
  if (!match || port < 1 || port > 65535 || match[1]!.split('.').some((n) => Number(n) > 255))
    throw new Error(
      `--swarm-bucket-sftp must be <IPv4 address>:<port> of this machine that the swarm nodes reach (e.g. 10.0.0.1:2222), not ${JSON.stringify(value)}.`,
    );
  return { host: match[1]!, port };
}

/**
 * The sshd of the buckets: public keys only, each account forced into `internal-sftp` inside
 * its chroot (its bucket at /files), no shell, no forwarding of any kind, no TTY, nobody else.
 * `-u 0007`: nothing a node writes is readable by others on the control machine. StrictModes is
 * off because the data folder may sit under a sticky folder; every file sshd reads is root's.
 */
export function sshdConfig(o: { host: string; port: number; stateDir: string; chrootRoot: string; pidFile: string }): string {
  return [
    `ListenAddress ${o.host}:${o.port}`,
    `HostKey ${o.stateDir}/host_ed25519_key`,
    `PidFile ${o.pidFile}`,
    // sshd reads it as the account: beside the chroots (public keys, root's, world-readable).
    `AuthorizedKeysFile ${o.chrootRoot}/authorized/%u`,
    `AllowUsers ${SFTP_ACCOUNT_PREFIX}*`,
    'AuthenticationMethods publickey',
    'PubkeyAuthentication yes',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'HostbasedAuthentication no',
    'PermitRootLogin no',
    'UsePAM no',
    'StrictModes no',
    'AllowTcpForwarding no',
    'AllowStreamLocalForwarding no',
    'AllowAgentForwarding no',
    'X11Forwarding no',
    'PermitTTY no',
    'PermitTunnel no',
    'PermitUserRC no',
    'PermitUserEnvironment no',
    'GatewayPorts no',
    'DisableForwarding yes',
    'Subsystem sftp internal-sftp',
    `ChrootDirectory ${o.chrootRoot}/%u`,
    `ForceCommand internal-sftp -u 0007 -d /${SFTP_FILES}`,
    '',
  ].join('\n');
}

/** One line of the accounts' authorized keys: `restrict` takes every forwarding and the TTY away again. */
export function authorizedKey(publicKey: string): string {
  return `restrict ${publicKey.trim()}\n`;
}

/**
 * The holder's script (sh, in the sshfs image): the key and the server's host key from its
 * environment into a tmpfs, a dead mount of an earlier holder let go, then sshfs in the
 * foreground; it says `<marker> mounted` once the mount is there and lives as long as sshfs.
 * `no_contain_symlinks`: links come back as the app wrote them and are followed only inside the
 * task (the server is chrooted, so nothing there leads out either); the caches are off so a
 * task sees what a task of another node wrote.
 */
export function holderScript(marker: string): string {
  return [
    'set -u',
    'umask 077',
    `printf '%s\\n' "$SLIPWAY_SFTP_KEY" > ${HOLDER_SECRETS}/key`,
    `printf '%s\\n' "$SLIPWAY_SFTP_KNOWN_HOST" > ${HOLDER_SECRETS}/known_hosts`,
    // Only a FUSE mount: the folder itself is the volume's bind, which must stay (rshared).
    `if grep -q " ${HOLDER_MOUNT} fuse" /proc/self/mounts; then fusermount3 -u -z ${HOLDER_MOUNT}; fi`,
    `sshfs -f -o "${sshfsOptions()},port=$SLIPWAY_SFTP_PORT" "$SLIPWAY_SFTP_TARGET:" ${HOLDER_MOUNT} &`,
    'pid=$!',
    // Docker's stop: the mount goes first, so no dead mount is left in the node's volume.
    `trap 'fusermount3 -u -z ${HOLDER_MOUNT}; kill $pid 2>/dev/null; exit 0' TERM INT`,
    'i=0',
    'while [ $i -lt 300 ]; do',
    `  if grep -q " ${HOLDER_MOUNT} fuse.sshfs " /proc/self/mounts; then echo "${marker} mounted"; wait $pid; exit $?; fi`,
    '  kill -0 $pid 2>/dev/null || { wait $pid; exit $?; }',
    '  sleep 0.1; i=$((i + 1))',
    'done',
    'exit 1',
    '',
  ].join('\n');
}

export function sshfsOptions(): string {
  return [
    'allow_other',
    'nodev',
    'nosuid',
    'no_contain_symlinks',
    'reconnect',
    'dir_cache=no',
    'attr_timeout=0',
    'entry_timeout=0',
    'negative_timeout=0',
    'ServerAliveInterval=5',
    'ServerAliveCountMax=3',
    'BatchMode=yes',
    'IdentitiesOnly=yes',
    `IdentityFile=${HOLDER_SECRETS}/key`,
    `UserKnownHostsFile=${HOLDER_SECRETS}/known_hosts`,
    'StrictHostKeyChecking=yes',
  ].join(',');
}

export const HOLDER_TMPFS = HOLDER_SECRETS;

/** The Docker volume a bucket is in on every node (the holder mounts it there). */
export function bucketVolume(owner: string, account: string): string {
  return `${owner}-${account}`;
}

/**
 * A task's mount of the bucket: the node's volume, which the holder's sshfs mount fills. Should
 * the volume be missing on the node (no holder there), Docker would make an empty one and the
 * app would write where nothing lasts: the driver options name a folder that does not exist,
 * so the task fails to start instead (an existing volume is used as it is).
 */
export function taskBucketMount(owner: string, source: string, target: string): Record<string, unknown> {
  return {
    Type: 'volume',
    Source: bucketVolume(owner, sftpAccount(source)),
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
