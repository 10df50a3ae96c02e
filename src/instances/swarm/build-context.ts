import { mkdtempSync, writeFileSync, chmodSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, isAbsolute, normalize } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { spawnProcessGroup } from '../../executor/process-group.js';
import { SYSTEM_TOOL_ENV } from '../../executor/system-tools.js';

/** One folder of the host copied into an image at the same path. */
export interface ContextFolder {
  path: string;
  /** Owner of the copied files in the image. */
  owner: { uid: number; gid: number };
  /** Where it goes in the image, when not at its own path (a release's pre-run layer: over the release). */
  target?: string;
}

/**
 * The Dockerfile of one layer on top of `from`: each folder at its own path (the toolchains and
 * the release keep the paths the environment names), with labels. JSON form, so no path is
 * ever parsed by a shell or split on spaces.
 */
export function layerDockerfile(from: string, folders: ContextFolder[], labels: Record<string, string>): string {
  const lines = [`FROM ${from}`];
  for (const f of folders) {
    const rel = relativeToRoot(f.path);
    lines.push(`COPY --chown=${f.owner.uid}:${f.owner.gid} ${JSON.stringify([rel, `/${relativeToRoot(f.target ?? f.path)}`])}`);
  }
  if (Object.keys(labels).length)
    lines.push(
      `LABEL ${Object.entries(labels)
        .map(([k, v]) => `${JSON.stringify(k)}=${JSON.stringify(v)}`)
        .join(' ')}`,
    );
  return lines.join('\n') + '\n';
}

export function relativeToRoot(path: string): string {
  if (!isAbsolute(path) || normalize(path) !== path || path === '/')
    throw new Error(`A folder copied into an image must be a normalised absolute path, not ${JSON.stringify(path)}.`);
  return path.replace(/\/+$/, '').slice(1);
}

/** tar of the current folder without its character devices ($1: the rename, $2: the Dockerfile). */
const WITHOUT_DEVICES =
  'set -o pipefail; find . ! -type c -print0 | tar --create --file=- "$1" --null --no-recursion --files-from=- --directory=/ "$2"';

export interface BuildContext {
  /** The tar stream: the Dockerfile and the folders, at their paths relative to `/`. */
  stream: Readable;
  /** Path of the Dockerfile inside the context. */
  dockerfile: string;
  /** Resolves when tar ended; rejects when it could not read every file. */
  done: Promise<void>;
}

/**
 * Streams a build context made by `tar`. With `readAs` (a release: the app's own user), tar runs
 * as that user inside the one folder given, entered by the daemon (the folder is of the
 * platform's layout, its parents may be closed to the app): root never opens a path of the
 * pushed tree, links are archived as links, never followed, and a file the app could not read
 * itself fails the build. Without it (the toolchain cache, the platform's own) tar runs as root.
 */
export function buildContext(
  dockerfileText: string,
  folders: string[],
  readAs?: { uid: number; gid: number },
  options: { withoutWhiteouts?: boolean } = {},
): BuildContext {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-image-'));
  chmodSync(dir, 0o755);
  writeFileSync(join(dir, 'Dockerfile'), dockerfileText, { mode: 0o644 });
  const dockerfile = `${relativeToRoot(dir)}/Dockerfile`;
  let argv: string[];
  let cwd = '/';
  if (readAs) {
    if (folders.length !== 1) throw new Error('A build context read as an app user holds exactly one folder.');
    cwd = folders[0]!;
    // Members read from the folder are `./…`: renamed to the folder's path in the image.
    const rename = `--transform=s,^\\.\\(/\\|$\\),${relativeToRoot(cwd).replace(/[\\,&]/g, '\\$&')}\\1,S`;
    const tarArgv = options.withoutWhiteouts
      ? // overlayfs marks what was removed with a character device, which no image build can copy:
        // find lists everything else (names NUL-separated, never parsed by the shell) for tar.
        ['bash', '-c', WITHOUT_DEVICES, 'bash', rename, dockerfile]
      : ['tar', '--create', '--file=-', rename, '.', '--directory=/', dockerfile];
    argv = ['setpriv', `--reuid=${readAs.uid}`, `--regid=${readAs.gid}`, '--clear-groups', '--no-new-privs', '--', ...tarArgv];
  } else {
    argv = ['tar', '--create', '--file=-', '--directory=/', dockerfile, ...folders.map(relativeToRoot)];
  }
  // The executor hands tar's output over as a stream for Docker to read at its own pace.
  const stream = new PassThrough();
  const done = spawnProcessGroup({ argv, cwd, env: SYSTEM_TOOL_ENV, rawOutput: true })
    .then(async (tar) => {
      let errors = 0;
      tar.stderr!.on('data', () => errors++);
      let ended = false;
      tar.stdout!.once('end', () => (ended = true));
      tar.stdout!.pipe(stream);
      const exit = await tar.done;
      // The executor stops waiting for output two seconds after tar ended: a reader stalled that
      // long gets a clear failure rather than a cut archive.
      if (!ended) throw new Error('Could not pack the folder into an image: the archive was not read in time after tar ended.');
      // tar's own messages name files of the pushed tree: they stay out of the error.
      if (exit.exitCode !== 0 || errors !== 0) {
        throw new Error(
          `Could not pack the folder into an image (tar exited with ${exit.exitCode ?? exit.signal}): some file in it cannot be read by ${readAs ? "the app's user" : 'the daemon'}.`,
        );
      }
    })
    .catch((error: Error) => {
      stream.destroy(error);
      throw error;
    })
    .finally(() => rmSync(dir, { recursive: true, force: true }));
  return { stream, dockerfile, done };
}
