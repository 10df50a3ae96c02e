import { createHash } from 'node:crypto';
import { readFileSync, existsSync, mkdtempSync, rmSync, createReadStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from '../../executor/run-command.js';
import type { DockerApi } from './docker-api.js';
import { SYSTEM_TOOL_ENV } from '../../executor/system-tools.js';

/**
 * What every instance image holds below the toolchains and the release: the part of the
 * sandbox's system (the host's /usr and /etc, read-only there) that releases use at run time.
 * Debian's nodejs is there because commands may name /usr/bin/node as on the host; tini is the
 * sandbox's init; libstdc++ and zlib are what the cached Node, Bun and JDK builds link against.
 */
export const BASE_PACKAGES = ['ca-certificates', 'tzdata', 'tini', 'nodejs', 'libstdc++6', 'zlib1g', 'procps'];

/** Where mmdebstrap takes Debian from: the machine's own apt sources, so no host name is ours. */
export function aptSourcesFile(): string {
  for (const candidate of ['/etc/apt/sources.list.d/debian.sources', '/etc/apt/sources.list']) {
    if (
      existsSync(candidate) &&
      readFileSync(candidate, 'utf8')
        .split('\n')
        .some((l) => /^\s*(deb\s|URIs:)/.test(l))
    )
      return candidate;
  }
  throw new Error(
    'No Debian apt source is configured on this machine (/etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list): the base image is built from it.',
  );
}

/** The Debian release this machine runs (bookworm...): the base image holds the same. */
export function debianSuite(): string {
  const osRelease = readFileSync('/etc/os-release', 'utf8');
  const codename = /^VERSION_CODENAME=("?)([a-z]+)\1$/m.exec(osRelease)?.[2];
  if (!codename) throw new Error('Cannot tell which Debian release this machine runs (no VERSION_CODENAME in /etc/os-release).');
  return codename;
}

/** The tag of the base image: changes when the package list or the Debian release does. */
export function baseImageTag(suite: string, packages: readonly string[] = BASE_PACKAGES): string {
  return `${suite}-${createHash('sha256')
    .update(JSON.stringify([suite, packages]))
    .digest('hex')
    .slice(0, 12)}`;
}

/**
 * Builds the base image once: mmdebstrap writes a minimal Debian root file system (no setuid
 * bits: instances run with no capabilities anyway) as a tar stream that Docker imports. Nothing
 * comes from an image hub.
 */
export async function importBaseImage(
  api: DockerApi,
  repository: string,
  tag: string,
  log: (line: string) => void,
  packages: readonly string[] = BASE_PACKAGES,
): Promise<void> {
  const suite = debianSuite();
  // mmdebstrap writes a file first: streamed straight to Docker it could stall with nobody reading.
  const dir = mkdtempSync(join(tmpdir(), 'slipway-base-'));
  const tarball = join(dir, 'base.tar');
  const argv = [
    '--quiet',
    '--variant=minbase',
    `--include=${packages.join(',')}`,
    // No setuid or setgid programs: nothing in an instance may gain privileges.
    '--customize-hook=find "$1" -xdev -type f -perm /6000 -exec chmod ug-s {} +',
    // No package lists or caches in the image.
    '--customize-hook=rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*',
    suite,
    tarball,
    aptSourcesFile(),
  ];
  log(`building the image ${repository}:${tag} from Debian ${suite} packages (${packages.join(', ')}); this happens once`);
  try {
    const errors: string[] = [];
    const result = await runCommand({
      argv: ['mmdebstrap', ...argv],
      cwd: '/',
      env: SYSTEM_TOOL_ENV,
      onLine: (stream, line) => stream === 'err' && errors.push(line) > 5 && errors.shift(),
    }).catch((e: Error) => {
      throw new Error(`${e.message} (mmdebstrap comes with the Debian package mmdebstrap)`);
    });
    if (result.exitCode !== 0) {
      throw new Error(`mmdebstrap could not build the base image (exit ${result.exitCode ?? result.signal}): ${errors.join(' ').trim()}`);
    }
    await api.progress({
      method: 'POST',
      path: '/images/create',
      query: { fromSrc: '-', repo: repository, tag },
      stream: createReadStream(tarball),
      headers: { 'content-type': 'application/x-tar' },
      what: 'import the base image',
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
