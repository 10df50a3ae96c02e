/**
 * The `bin/` folder of an installed tool: what a build puts on PATH. Native tools get relative
 * symlinks; JavaScript tools get small scripts that start them on the `node` found first on
 * PATH, i.e. the fetched Node of the plan, never whatever Node the machine has.
 */
import { readFile, symlink, writeFile } from 'node:fs/promises';
import { isAbsolute, join, normalize, relative } from 'node:path';
import { shellQuote } from '../executor/shell-quote.js';

/** Script that runs a JavaScript entry point with the `node` first on PATH. */
export function nodeWrapperScript(entryPoint: string, label: string): string {
  return [
    '#!/bin/sh',
    `# ${label}: runs on the node found first on PATH (the build's fetched Node.js).`,
    `exec node ${shellQuote(entryPoint)} "$@"`,
    '',
  ].join('\n');
}

const BIN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** The `bin` entries of a package.json as name -> path inside the package. */
export function binEntries(manifest: { name?: string; bin?: string | Record<string, string> }): Record<string, string> {
  const { bin } = manifest;
  if (bin === undefined) return {};
  if (typeof bin === 'string') {
    const name = (manifest.name ?? '').replace(/^@[^/]+\//, '');
    return name ? { [name]: bin } : {};
  }
  return { ...bin };
}

/** Rejects names and paths that would escape the folders they belong to. */
function checkedEntry(name: string, path: string): string {
  const clean = normalize(path);
  if (!BIN_NAME.test(name) || isAbsolute(clean) || clean.startsWith('..')) {
    throw new Error(`Refusing the package's bin entry "${name}": "${path}" (a bin must be a plain name pointing inside the package).`);
  }
  return clean;
}

/**
 * Writes one wrapper per bin of the JavaScript package unpacked at `stagingPackageDir`.
 * Wrappers name the package's final location (`finalPackageDir`), where it is after the
 * atomic rename of the install folder.
 */
export async function writeNodeWrappers(
  stagingPackageDir: string,
  finalPackageDir: string,
  binDir: string,
  label: string,
): Promise<string[]> {
  const manifest = JSON.parse(await readFile(join(stagingPackageDir, 'package.json'), 'utf8'));
  const entries = binEntries(manifest);
  for (const [name, path] of Object.entries(entries)) {
    const clean = checkedEntry(name, path);
    await writeFile(join(binDir, name), nodeWrapperScript(join(finalPackageDir, clean), label), { mode: 0o755 });
  }
  return Object.keys(entries);
}

/** A relative symlink `binDir/name` -> `target` (absolute), valid wherever the folder moves. */
export async function linkIntoBin(binDir: string, name: string, target: string): Promise<void> {
  await symlink(relative(binDir, target), join(binDir, name));
}
