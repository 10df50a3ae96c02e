/**
 * One read of the files in the source folder that steer a Node/Bun plan, so that every
 * decision after it is a pure function of this snapshot (and can be tested as data).
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';

/** Lockfiles, in the order detection looks at them (SPEC §4.4 rule 3, then npm's own). */
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

async function readText(file: string, limit?: number): Promise<string | undefined> {
  try {
    const text = await readFile(file, 'utf8');
    return limit === undefined ? text : text.slice(0, limit);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR') return undefined;
    throw error;
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}

/** Mise reads these names; slipway honours the first one present. */
export const MISE_FILES = ['mise.toml', '.mise.toml'];

/**
 * Reads the snapshot. `miseFile` overrides where mise.toml is looked for (the reference's
 * CC_MISE_FILE_PATH); it must already be a safe path relative to the source folder.
 */
export async function readProjectFiles(sourceDir: string, miseFile?: string): Promise<ProjectFiles> {
  const at = (name: string) => path.join(sourceDir, name);
  const lockfiles: Lockfile[] = [];
  for (const name of LOCKFILES) if (await exists(at(name))) lockfiles.push(name);

  let mise: ProjectFiles['mise'];
  for (const name of miseFile ? [miseFile] : MISE_FILES) {
    const text = await readText(at(name));
    if (text !== undefined) {
      mise = { path: name, text };
      break;
    }
  }

  const startCandidates: string[] = [];
  for (const name of ['server.js', 'index.js', 'app.js', 'main.js', 'server.ts', 'index.ts']) {
    if (await exists(at(name))) startCandidates.push(name);
  }

  return {
    lockfiles,
    yarnLockHead: lockfiles.includes('yarn.lock') ? await readText(at('yarn.lock'), 2048) : undefined,
    npmrc: await readText(at('.npmrc')),
    yarnrcYml: await readText(at('.yarnrc.yml')),
    mise,
    gitignore: await readText(at('.gitignore')),
    nodeModulesCommitted: await exists(at('node_modules')),
    startCandidates,
  };
}
