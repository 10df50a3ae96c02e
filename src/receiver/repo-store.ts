import { access, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { isAppId } from '../core/names.js';
import { POST_RECEIVE_HOOK, PRE_RECEIVE_HOOK, PUSH_REPORT_CLIENT, PUSH_REPORT_SCRIPT } from './repo-hooks.js';
import { gitEnvironment } from './git-environment.js';
import { runOrThrow, runProcess } from './run-process.js';

const COMMIT_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
const SAFE_REF = /^refs\/[A-Za-z0-9._/-]+$/;

/** One bare git repository per app, under one folder, named `<app_id>.git`. */
export class RepoStore {
  readonly reposDir: string;

  /**
   * `locate`: where an app's repository lives when not in `reposDir` (the daemon keeps each in
   * the app's own filesystem, so its disk budget bounds pushes).
   */
  constructor(
    reposDir: string,
    private readonly locate?: (appId: string) => string,
  ) {
    this.reposDir = resolve(reposDir);
  }

  /** Where the app's repository lives. Throws for anything that is not an app id. */
  pathFor(appId: string): string {
    if (!isAppId(appId)) {
      throw new Error(`Not an app id: ${JSON.stringify(appId)}. App ids look like app_<uuid>.`);
    }
    return this.locate ? this.locate(appId) : join(this.reposDir, `${appId}.git`);
  }

  /**
   * Creates the bare repository if missing and (re)installs the hooks, so every repository
   * carries the hooks of the running version. Safe to call on every push.
   */
  async ensure(appId: string): Promise<string> {
    const path = this.pathFor(appId);
    if (!(await exists(join(path, 'HEAD')))) {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      // Empty template: no sample hooks; HEAD on master so clones check out what is deployed.
      await runOrThrow(['git', 'init', '--quiet', '--bare', '--template=', '--initial-branch=master', path], {
        env: gitEnvironment(),
      });
    }
    // CI systems push from shallow clones; without this git refuses them ("shallow update not allowed").
    await runOrThrow(['git', '--git-dir', path, 'config', 'receive.shallowUpdate', 'true'], {
      env: gitEnvironment(),
    });
    await mkdir(join(path, 'hooks'), { recursive: true });
    await installFile(join(path, 'hooks', 'pre-receive'), PRE_RECEIVE_HOOK, 0o755);
    await installFile(join(path, 'hooks', 'post-receive'), POST_RECEIVE_HOOK, 0o755);
    await installFile(join(path, 'hooks', PUSH_REPORT_SCRIPT), PUSH_REPORT_CLIENT, 0o644);
    return path;
  }

  /** The commit a ref points to, or null when the repository or the ref does not exist. */
  async head(appId: string, ref = 'refs/heads/master'): Promise<string | null> {
    if (!SAFE_REF.test(ref) || ref.includes('..')) throw new Error(`Not a ref name: ${JSON.stringify(ref)}`);
    const path = this.pathFor(appId);
    if (!(await exists(join(path, 'HEAD')))) return null;
    const result = await runProcess(['git', '--git-dir', path, 'rev-parse', '--verify', '--quiet', `${ref}^{commit}`], {
      env: gitEnvironment(),
    });
    return result.code === 0 ? result.stdout.trim() : null;
  }

  /**
   * Writes the tree of `commit` into `destDir` (created if missing), without `.git`.
   * It checks the tree out through a throw-away index rather than `git archive`, so the files
   * are exactly what a clone gives: `export-ignore` / `export-subst` attributes, meant for
   * release tarballs, do not silently drop or rewrite files of the deployed app.
   */
  async exportCommit(appId: string, commit: string, destDir: string): Promise<void> {
    if (!COMMIT_ID.test(commit)) {
      throw new Error(`Not a full commit id: ${JSON.stringify(commit)} (expected 40 or 64 lowercase hex digits).`);
    }
    const path = this.pathFor(appId);
    const target = resolve(destDir);
    await mkdir(target, { recursive: true });
    const scratch = await mkdtemp(join(tmpdir(), 'slipway-export-'));
    try {
      const env = gitEnvironment({ GIT_INDEX_FILE: join(scratch, 'index') });
      const git = ['git', '--git-dir', path, '--work-tree', target];
      await runOrThrow([...git, 'read-tree', `${commit}^{tree}`], { env });
      await runOrThrow([...git, 'checkout-index', '--all', '--force'], { env });
    } catch (error) {
      throw new Error(`Could not export commit ${commit} of ${appId} into ${target}: ${(error as Error).message}`);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  /** The full id of a commit of the app's repository given by a prefix, or null. */
  async resolveCommit(appId: string, prefix: string): Promise<string | null> {
    if (!/^[0-9a-f]{4,64}$/.test(prefix)) return null;
    const path = this.pathFor(appId);
    if (!(await exists(join(path, 'HEAD')))) return null;
    const result = await runProcess(['git', '--git-dir', path, 'rev-parse', '--verify', '--quiet', `${prefix}^{commit}`], {
      env: gitEnvironment(),
    });
    return result.code === 0 ? result.stdout.trim() : null;
  }

  /** Deletes the app's repository (its pushed history is gone). */
  async remove(appId: string): Promise<void> {
    await rm(this.pathFor(appId), { recursive: true, force: true });
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** Write-then-rename, so a push running the hook at that moment never sees a half-written file. */
async function installFile(path: string, content: string, mode: number): Promise<void> {
  const temporary = `${path}.${randomUUID()}.tmp`;
  await writeFile(temporary, content, { mode });
  await rename(temporary, path);
}
