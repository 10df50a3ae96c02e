/**
 * Makes a tool available at an exact version in the shared toolchain cache:
 * `<cacheDir>/<tool>/<version>/` holds the unpacked package (`package/`) and a `bin/` folder to
 * put on PATH. Each version is fetched once; concurrent builds asking for the same version
 * each stage their own copy and the first atomic rename wins.
 */
import { runChecked } from '../executor/run-captured.js';
import { chmod, copyFile, link, mkdir, mkdtemp, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import semver from 'semver';
import type { ToolName } from './tools.js';
import { linkIntoBin, writeNodeWrappers } from './bin-links.js';
import { makeTreeShareable } from './file-modes.js';
import { fetchPackage } from './package-fetch.js';
import { isNpmTool, NPM_TOOLS, packageForTool, pnpmNativePackage, type NpmTool } from './tool-packages.js';

export interface ToolInstall {
  tool: ToolName;
  version: string;
  /** Folder to put on PATH; holds an executable named after the tool. */
  binDir: string;
  /** The install folder, `<cacheDir>/<tool>/<version>` (the unpacked package is in `package/`). */
  home: string;
}

/** Staging folders older than this belong to a crashed fetch and are removed. */
const STALE_STAGING_MS = 6 * 60 * 60 * 1000;
const STAGING_PREFIX = '.staging-';

const inFlight = new Map<string, Promise<ToolInstall>>();

/** PATH value listing the installs' bin folders in plan order (duplicates dropped). */
export function toolPath(installs: ToolInstall[]): string {
  return [...new Set(installs.map((i) => i.binDir))].join(':');
}

/** Native binaries inside their package, and the version line each prints. */
const NATIVE_BINARIES: Partial<Record<NpmTool, { path: string; versionLine: (v: string) => RegExp }>> = {
  node: { path: 'bin/node', versionLine: (v) => new RegExp(`^v${v.replace(/\./g, '\\.')}$`) },
  bun: { path: 'bin/bun', versionLine: (v) => new RegExp(`^${v.replace(/\./g, '\\.')}$`) },
  deno: { path: 'deno', versionLine: (v) => new RegExp(`^deno ${v.replace(/\./g, '\\.')}\\b`) },
};

function exactVersion(tool: string, version: string): string {
  const parsed = semver.parse(version);
  if (!parsed || parsed.version !== version) {
    throw new Error(
      `ensureTool needs an exact version like 24.11.0 for ${tool}, got "${version}"; resolve ranges with resolveVersion first.`,
    );
  }
  return parsed.version;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Where `tool` at exactly `version` is (or will be, once fetched) in the cache, and whether it
 * is there: for showing a plan without fetching anything.
 */
export async function locateTool(cacheDir: string, tool: NpmTool, version: string): Promise<{ install: ToolInstall; installed: boolean }> {
  const home = join(resolve(cacheDir), tool, exactVersion(tool, version));
  const install: ToolInstall = { tool, version, binDir: join(home, 'bin'), home };
  return { install, installed: await exists(join(install.binDir, tool)) };
}

/**
 * Fetches `tool` at exactly `version` unless the cache has it, and returns where it is.
 * `log` receives progress lines for the deploy log.
 */
export async function ensureTool(cacheDir: string, tool: ToolName, version: string, log?: (line: string) => void): Promise<ToolInstall> {
  if (!isNpmTool(tool)) {
    throw new Error(`ensureTool fetches ${NPM_TOOLS.join(', ')} from the npm registry; "${tool}" is installed another way.`);
  }
  const exact = exactVersion(tool, version);
  const root = resolve(cacheDir);
  const home = join(root, tool, exact);
  let pending = inFlight.get(home);
  if (pending) {
    log?.(`Waiting for the fetch of ${tool} ${exact} already in progress...`);
  } else {
    pending = install(root, tool, exact, home, log ?? (() => {})).finally(() => inFlight.delete(home));
    inFlight.set(home, pending);
  }
  return pending;
}

async function install(cacheDir: string, tool: NpmTool, version: string, home: string, log: (line: string) => void): Promise<ToolInstall> {
  const result: ToolInstall = { tool, version, binDir: join(home, 'bin'), home };
  if (await exists(join(result.binDir, tool))) {
    log(`Using ${tool} ${version} from the toolchain cache.`);
    return result;
  }

  const toolDir = join(cacheDir, tool);
  await makeDirsShareable(toolDir);
  await removeStaleStaging(toolDir);
  await setAsideBroken(home, tool);

  const packageName = packageForTool(tool, version);
  const started = Date.now();
  log(`Fetching ${tool} ${version} (${packageName}@${version}) from the npm registry...`);
  const staging = await mkdtemp(join(toolDir, `${STAGING_PREFIX}${version}-`));
  try {
    await stage(tool, version, packageName, staging, home);
    await makeTreeShareable(staging);
    try {
      await rename(staging, home);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Another build finished the same version first: use its copy.
      if ((code === 'ENOTEMPTY' || code === 'EEXIST') && (await exists(join(result.binDir, tool)))) {
        await rm(staging, { recursive: true, force: true });
        log(`${tool} ${version} was fetched by another build meanwhile; using it.`);
        return result;
      }
      throw error;
    }
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
  log(`Fetched ${tool} ${version} in ${((Date.now() - started) / 1000).toFixed(1)}s.`);
  return result;
}

/** Unpacks the tool into `staging` and builds its bin folder, pointing wrappers at `home`. */
async function stage(tool: NpmTool, version: string, packageName: string, staging: string, home: string): Promise<void> {
  const packageDir = join(staging, 'package');
  const binDir = join(staging, 'bin');
  await fetchPackage(packageName, version, packageDir, staging);
  await mkdir(binDir);

  const native = NATIVE_BINARIES[tool];
  if (native) {
    const binary = join(packageDir, native.path);
    await checkNativeVersion(tool, binary, version, native.versionLine(version));
    await linkIntoBin(binDir, tool, binary);
    // bun acts as bunx when started under that name.
    if (tool === 'bun') await linkIntoBin(binDir, 'bunx', join(binDir, 'bun'));
    return;
  }
  if (tool === 'pnpm' && (await stagePnpmNative(version, packageDir, binDir, staging))) return;
  const names = await writeNodeWrappers(packageDir, join(home, 'package'), binDir, `${tool} ${version}`);
  if (!names.includes(tool)) {
    throw new Error(`${packageName}@${version} declares no "${tool}" executable (its bin entries: ${names.join(', ') || 'none'}).`);
  }
}

/**
 * Recent pnpm versions are a native program: the `pnpm` package holds placeholders and names
 * the binary's package in its optionalDependencies. Its own install script would copy the
 * binary over the placeholders; this does the same, since npm pack runs no scripts.
 * Returns false for pnpm versions that are plain JavaScript.
 */
async function stagePnpmNative(version: string, packageDir: string, binDir: string, staging: string): Promise<boolean> {
  const manifest = JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8')) as {
    optionalDependencies?: Record<string, string>;
    bin?: Record<string, string>;
  };
  const nativePackage = pnpmNativePackage();
  const nativeVersion = manifest.optionalDependencies?.[nativePackage];
  if (!nativeVersion) return false;
  const nativeDir = join(packageDir, 'node_modules', ...nativePackage.split('/'));
  await fetchPackage(nativePackage, nativeVersion, nativeDir, staging);
  const binary = join(nativeDir, 'pnpm');
  for (const name of Object.keys(manifest.bin ?? { pnpm: 'pnpm' })) {
    if (!/^[a-z]+$/.test(name)) continue;
    const placeholder = join(packageDir, name);
    await rm(placeholder, { force: true });
    await link(binary, placeholder).catch(() => copyFile(binary, placeholder));
    await linkIntoBin(binDir, name, placeholder);
  }
  await checkNativeVersion('pnpm', binary, version, new RegExp(`^${version.replace(/\./g, '\\.')}$`));
  return true;
}

/** Runs `<binary> --version` so that a damaged or wrong download never enters the cache. */
async function checkNativeVersion(tool: string, binary: string, version: string, expected: RegExp): Promise<void> {
  let output: string;
  try {
    const { stdout } = await runChecked([binary, '--version'], {
      timeoutMs: 60_000,
      env: { PATH: '/usr/bin:/bin', HOME: '/nonexistent', DENO_NO_UPDATE_CHECK: '1' },
    });
    output = stdout.trim();
  } catch (error) {
    throw new Error(
      `The downloaded ${tool} ${version} does not run on this machine (\`${binary} --version\` failed: ${(error as Error).message}).`,
    );
  }
  if (!output.split('\n').some((line) => expected.test(line.trim()))) {
    throw new Error(`The downloaded ${tool} reports "${output.split('\n')[0]}" instead of version ${version}; not caching it.`);
  }
}

/** The cache folders must be traversable by build users: folders created here get 0755. */
async function makeDirsShareable(toolDir: string): Promise<void> {
  const firstCreated = await mkdir(toolDir, { recursive: true });
  if (firstCreated === undefined) return;
  for (let dir = toolDir; ; dir = dirname(dir)) {
    await chmod(dir, 0o755);
    if (dir === firstCreated || dir === dirname(dir)) break;
  }
}

async function removeStaleStaging(toolDir: string): Promise<void> {
  for (const entry of await readdir(toolDir)) {
    if (!entry.startsWith(STAGING_PREFIX)) continue;
    const path = join(toolDir, entry);
    try {
      if (Date.now() - (await stat(path)).mtimeMs > STALE_STAGING_MS) await rm(path, { recursive: true, force: true });
    } catch {
      // Removed by another build meanwhile.
    }
  }
}

/** An install folder without its executable is left over from an older layout: move it away. */
async function setAsideBroken(home: string, tool: string): Promise<void> {
  if (!(await exists(home)) || (await exists(join(home, 'bin', tool)))) return;
  const aside = `${home}.broken-${process.pid}-${Date.now()}`;
  try {
    await rename(home, aside);
    await rm(aside, { recursive: true, force: true });
  } catch {
    // Another build may have moved it already.
  }
}
