import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxBucket } from '../../sandbox/sandbox-identity.js';
import { runChecked } from '../../executor/run-captured.js';
import { launchDetached } from '../../executor/launch-detached.js';
import { SYSTEM_TOOL_ENV } from '../../executor/system-tools.js';
import { authorizedKey, SFTP_FILES, sftpAccount, sshdConfig } from './bucket-sftp-config.js';

/** The system's tools, through the executor: a failure rejects with their standard error kept (CommandFailedError). */
const run = (command: string, args: string[]) => runChecked([command, ...args], { cwd: '/', env: SYSTEM_TOOL_ENV, timeoutMs: 30_000 });
const SSHD = '/usr/sbin/sshd';

/** What a node needs to mount one bucket: the account, its key, and the server it trusts. */
export interface BucketExport {
  account: string;
  host: string;
  port: number;
  /** The account's private key (OpenSSH format): handed to the node's holder container only. */
  privateKey: string;
  /** `[host]:port ssh-ed25519 ...`: the node checks the server against it. */
  knownHost: string;
}

export interface BucketSftpOptions {
  host: string;
  port: number;
  /** Root-only folder of the keys and the config (`<data>/fs-buckets/sftp`). */
  stateDir: string;
  /** Where each account's chroot is: every folder on the way must be root's and not writable by others (sshd's rule). */
  chrootRoot: string;
  log(line: string): void;
}

/**
 * The control machine's side of FS buckets on Swarm: an sshd of the daemon's own, SFTP only, on
 * the address the nodes reach. Each bucket is an account (`slbsftp-<12 hex>`, in the bucket's
 * group, no password, no shell) whose chroot holds the bucket's mount at /files, bound there, and
 * whose one key is the daemon's, handed to the nodes' holders. The sshd outlives the daemon, as
 * the buckets' mounts do: nodes keep their mounts across a daemon restart.
 */
export class BucketSftp {
  private server: Promise<void> | undefined;
  private readonly exports = new Map<string, Promise<BucketExport>>();

  constructor(private readonly o: BucketSftpOptions) {}

  /** The bucket reachable over SFTP (its account, key and chroot made once), the server running. */
  ensure(bucket: SandboxBucket): Promise<BucketExport> {
    let pending = this.exports.get(bucket.source);
    if (!pending) {
      pending = this.ensureServer().then(() => this.exportBucket(bucket));
      this.exports.set(bucket.source, pending);
      pending.catch(() => this.exports.delete(bucket.source));
    }
    return pending;
  }

  /**
   * The platform stops (the nodes' holders are gone): the listener and the sessions left end,
   * the chroots let go of the buckets (so they unmount), and the accounts go.
   */
  async stop(): Promise<void> {
    const pid = this.runningPid();
    if (pid) process.kill(pid, 'SIGTERM');
    this.server = undefined;
    for (const [source, pending] of this.exports) {
      this.exports.delete(source);
      const exported = await pending.catch(() => undefined);
      if (!exported) continue;
      await run('pkill', ['-KILL', '-u', exported.account]).catch(() => undefined);
      await run('umount', ['-l', join(this.o.chrootRoot, exported.account, SFTP_FILES)]).catch(() => undefined);
      await run('userdel', [exported.account]).catch(() => undefined);
    }
  }

  private get pidFile(): string {
    return join(this.o.chrootRoot, 'sshd.pid');
  }

  private get configFile(): string {
    return join(this.o.stateDir, 'sshd_config');
  }

  private ensureServer(): Promise<void> {
    this.server ??= (async () => {
      if (!existsSync(SSHD))
        throw new Error(
          `FS buckets on Swarm need ${SSHD} on this machine (Debian package openssh-server; ./dev setup installs it): the nodes mount each bucket over SFTP.`,
        );
      for (const dir of [this.o.stateDir, join(this.o.stateDir, 'keys')]) {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        chmodSync(dir, 0o700);
      }
      for (const dir of [this.o.chrootRoot, join(this.o.chrootRoot, 'authorized')]) {
        mkdirSync(dir, { recursive: true, mode: 0o755 });
        chmodSync(dir, 0o755);
      }
      // sshd's privilege separation folder.
      mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
      const hostKey = join(this.o.stateDir, 'host_ed25519_key');
      if (!existsSync(hostKey)) await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'slipway-buckets', '-f', hostKey]);
      const config = sshdConfig({ ...this.o, pidFile: this.pidFile });
      const previous = existsSync(this.configFile) ? readFileSync(this.configFile, 'utf8') : '';
      writeFileSync(this.configFile, config, { mode: 0o600 });
      const running = this.runningPid();
      if (running && previous === config) return;
      // Another address or port: the listener goes (the nodes' sessions, its children, go on).
      if (running) process.kill(running, 'SIGTERM');
      await run(SSHD, ['-t', '-f', this.configFile]).catch((e: { stderr?: string }) => {
        throw new Error(
          `The FS buckets' SFTP server cannot start: ${String(e.stderr ?? e)
            .trim()
            .slice(0, 300)}`,
        );
      });
      // sshd puts itself in the background (its pid file says where): launched detached, so its
      // daemon is never caught by a kill of the launcher's process group before it leaves it.
      const sshdLog = join(this.o.stateDir, 'sshd.log');
      const launched = await launchDetached({
        argv: [SSHD, '-f', this.configFile, '-E', sshdLog],
        cwd: '/',
        env: SYSTEM_TOOL_ENV,
        settleMs: 10_000,
      });
      if (launched.state === 'exited' && launched.exitCode !== 0) {
        throw new Error(`The FS buckets' SFTP server did not start (sshd exited ${launched.exitCode ?? launched.signal}); see ${sshdLog}.`);
      }
      this.o.log(`the FS buckets' SFTP server listens on ${this.o.host}:${this.o.port} for the swarm nodes`);
    })();
    this.server.catch(() => (this.server = undefined));
    return this.server;
  }

  /** The listener an earlier start left, when it is still this config's sshd. */
  private runningPid(): number | undefined {
    try {
      const pid = Number(readFileSync(this.pidFile, 'utf8').trim());
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      return cmdline.includes(this.configFile) ? pid : undefined;
    } catch {
      return undefined;
    }
  }

  private async exportBucket(bucket: SandboxBucket): Promise<BucketExport> {
    const account = sftpAccount(bucket.source);
    const exists = await run('getent', ['passwd', account]).then(
      () => true,
      () => false,
    );
    // No password ('*', not locked: sshd refuses locked accounts), no shell, no home of its own.
    if (!exists)
      await run('useradd', [
        '--system',
        '--no-create-home',
        '--home-dir',
        '/',
        '--shell',
        '/usr/sbin/nologin',
        '--gid',
        String(bucket.gid),
        '--password',
        '*',
        account,
      ]);
    const key = join(this.o.stateDir, 'keys', account);
    if (!existsSync(key)) await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', account, '-f', key]);
    writeFileSync(join(this.o.chrootRoot, 'authorized', account), authorizedKey(readFileSync(`${key}.pub`, 'utf8')), { mode: 0o644 });
    // The chroot is root's 0755 (sshd's rule); the bucket is bound at files inside.
    const chroot = join(this.o.chrootRoot, account);
    const files = join(chroot, SFTP_FILES);
    mkdirSync(files, { recursive: true, mode: 0o755 });
    chmodSync(chroot, 0o755);
    if (!mountedAt(files)) {
      await run('mount', ['--bind', bucket.source, files]);
      await run('mount', ['-o', 'remount,bind,nodev,nosuid,noexec', files]);
    }
    const hostKey = readFileSync(join(this.o.stateDir, 'host_ed25519_key.pub'), 'utf8').trim().split(' ').slice(0, 2).join(' ');
    return {
      account,
      host: this.o.host,
      port: this.o.port,
      privateKey: readFileSync(key, 'utf8'),
      knownHost: `[${this.o.host}]:${this.o.port} ${hostKey}`,
    };
  }
}

function mountedAt(path: string): boolean {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((line) => line.split(' ')[4] === path);
}
