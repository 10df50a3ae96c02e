/**
 * One read of the files in the source folder that steer a Node/Bun plan, so that every
 * decision after it is a pure function of this snapshot (and can be tested as data).
 */
import type { UntrustedTree } from '../../sandbox/untrusted-tree.js';

/** Lockfiles, in the order detection looks at them (docs/behaviour.md: Node.js and Bun builds, rule 3; then npm's own). */
export const LOCKFILES = ['bun.lock', 'bun.lockb', 'pnpm-lock.yaml', 'yarn.lock', 'package-lock.json', 'npm-shrinkwrap.json'] as const;
export type Lockfile = (typeof LOCKFILES)[number];

export interface ProjectFiles {
  /** Lockfiles present, in LOCKFILES order. */
  lockfiles: Lockfile[];
  /** Text of yarn.lock's first 2 KiB, enough to tell Yarn 1 from berry. */
  yarnLockHead?: string;
  /** The project's own .npmrc, kept when slipway adds registry credentials. */
  npmrc?: string;
  /** The project's own .yarnrc.yml (Yarn berry settings). */
  yarnrcYml?: string;
  /** Mise configuration: its path relative to the source folder and its text. */
  mise?: { path: string; text: string };
  /** `.gitignore` text, undefined when the file is absent. */
  gitignore?: string;
  /** True when a node_modules folder came with the commit. */
  nodeModulesCommitted: boolean;
  /** Files present among those a start command might name (hint for a missing start). */
  startCandidates: string[];
}

/** Mise reads these names; slipway honours the first one present. */
export const MISE_FILES = ['mise.toml', '.mise.toml'];

/**
 * Reads the snapshot through the repository's untrusted tree: a file that is a link out of the
 * repository, a fifo or a folder is refused (by name) rather than read. `miseFile` overrides
 * where mise.toml is looked for (the reference's CC_MISE_FILE_PATH); it must already be a safe
 * path relative to the source folder.
 */
export async function readProjectFiles(tree: UntrustedTree, miseFile?: string): Promise<ProjectFiles> {
  const exists = async (name: string) => (await tree.entry(name)) !== undefined;
  const lockfiles: Lockfile[] = [];
  for (const name of LOCKFILES) if (await exists(name)) lockfiles.push(name);

  let mise: ProjectFiles['mise'];
  for (const name of miseFile ? [miseFile] : MISE_FILES) {
    const text = await tree.readText(name);
    if (text !== undefined) {
      mise = { path: name, text };
      break;
    }
  }

  const startCandidates: string[] = [];
  for (const name of ['server.js', 'index.js', 'app.js', 'main.js', 'server.ts', 'index.ts']) {
    if (await exists(name)) startCandidates.push(name);
  }

  return {
    lockfiles,
    yarnLockHead: lockfiles.includes('yarn.lock') ? await tree.readText('yarn.lock', { maxBytes: 2048, truncate: true }) : undefined,
    npmrc: await tree.readText('.npmrc'),
    yarnrcYml: await tree.readText('.yarnrc.yml'),
    mise,
    // Only its start matters (does it ignore node_modules?); a huge .gitignore is not an error.
    gitignore: await tree.readText('.gitignore', { truncate: true }),
    nodeModulesCommitted: await exists('node_modules'),
    startCandidates,
  };
}
