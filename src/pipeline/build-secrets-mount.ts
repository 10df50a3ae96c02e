import { lstatSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { runCaptured, runChecked } from '../executor/run-captured.js';
import { SYSTEM_TOOL_ENV } from '../executor/system-tools.js';

/** Room for a few keys and rc files per build; a full tmpfs fails the build, never the host. */
const SIZE = '16m';

/**
 * The builds' credentials (a private registry's rc file, CC_SSH_PRIVATE_KEY) live on a small
 * tmpfs of their own, `<data>/build-secrets`, never on a disk: a file removed from an app's
 * filesystem leaves its bytes in the image's free blocks, where a copy of the image (a backup,
 * a disk handed on) would carry them. On tmpfs they are gone when removed, and gone at the
 * latest when the machine restarts.
 *
 * Builds end with the daemon, so the mount does too: every stop unmounts it (a daemon killed
 * before it could leaves it mounted; the next start empties it).
 */
export class BuildSecretsMount {
  constructor(private readonly folder: string) {}

  /** Mounted (unless a daemon before left it mounted) and emptied: no build runs yet. */
  async ensure(): Promise<void> {
    mkdirSync(this.folder, { recursive: true, mode: 0o700 });
    if (!lstatSync(this.folder).isDirectory())
      throw new Error(`${this.folder} is not a folder: cannot mount the builds' credentials there.`);
    if (!this.mounted()) {
      // noexec, nodev, nosuid: nothing there is ever run; mode 0700: root's alone on the host.
      await runChecked(['mount', '-t', 'tmpfs', '-o', `size=${SIZE},mode=0700,noexec,nodev,nosuid`, 'tmpfs', this.folder], {
        cwd: '/',
        env: SYSTEM_TOOL_ENV,
      });
    }
    for (const name of readdirSync(this.folder)) rmSync(`${this.folder}/${name}`, { recursive: true, force: true });
  }

  async unmount(): Promise<void> {
    if (!this.mounted()) return;
    const plain = await runCaptured({ argv: ['umount', this.folder], cwd: '/', env: SYSTEM_TOOL_ENV });
    // A build that outlived the stop still holds it: detached now, freed after it.
    if (plain.exitCode !== 0) await runChecked(['umount', '-l', this.folder], { cwd: '/', env: SYSTEM_TOOL_ENV });
  }

  /** On another device than the folder holding it (see AppDisks.mounted for why not mountinfo). */
  private mounted(): boolean {
    try {
      return lstatSync(this.folder).dev !== lstatSync(dirname(this.folder)).dev;
    } catch {
      return false;
    }
  }
}
