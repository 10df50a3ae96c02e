/**
 * Which npm package ships each tool. Every toolchain slipway runs is fetched from the npm
 * registry, because that is the one download source a self-hosted machine is sure to reach.
 */
import { readFileSync } from 'node:fs';
import semver from 'semver';
import type { ToolName } from './tools.js';

/** Tools this module can fetch (java and sbt come from elsewhere). */
export type NpmTool = Exclude<ToolName, 'java' | 'sbt'>;

export const NPM_TOOLS: readonly NpmTool[] = ['node', 'npm', 'bun', 'pnpm', 'yarn', 'deno'];

export function isNpmTool(tool: string): tool is NpmTool {
  return (NPM_TOOLS as readonly string[]).includes(tool);
}

/** npm's `cpu` names for the architectures binaries are published for. */
function npmArch(arch: string = process.arch): string {
  if (arch === 'x64' || arch === 'arm64') return arch;
  throw new Error(`slipway fetches Node.js, Bun and Deno binaries for linux x64 and arm64 only; this machine is ${arch}.`);
}

/**
 * Bun's default x64 build needs AVX2 and dies with "Illegal instruction" without it; the
 * `-baseline` build runs on any x64 CPU.
 */
export function cpuHasAvx2(): boolean {
  try {
    return /\bavx2\b/.test(readFileSync('/proc/cpuinfo', 'utf8'));
  } catch {
    return false;
  }
}

/** The npm package holding a tool at a given version. Yarn 1 and Yarn 2+ live in different packages. */
export function packageForTool(tool: NpmTool, version: string, arch: string = process.arch, avx2: () => boolean = cpuHasAvx2): string {
  switch (tool) {
    case 'node':
      return `node-linux-${npmArch(arch)}`;
    case 'bun':
      return npmArch(arch) === 'x64' && !avx2() ? '@oven/bun-linux-x64-baseline' : `@oven/bun-linux-${npmArch(arch)}`;
    case 'deno':
      return `@deno/linux-${npmArch(arch)}-glibc`;
    case 'npm':
      return 'npm';
    case 'pnpm':
      return 'pnpm';
    case 'yarn':
      return semver.major(version) < 2 ? 'yarn' : '@yarnpkg/cli-dist';
  }
}

/**
 * Packages whose versions make up a tool's catalog, each with the versions it contributes:
 * the `yarn` package for 1.x (it also carries a stray 2.x publish that is not Yarn berry),
 * `@yarnpkg/cli-dist` for 2.x and later.
 */
export function catalogPackagesForTool(tool: NpmTool, arch: string = process.arch): Array<{ name: string; range: string }> {
  switch (tool) {
    case 'yarn':
      return [
        { name: 'yarn', range: '>=1.0.0 <2.0.0' },
        { name: '@yarnpkg/cli-dist', range: '>=2.0.0' },
      ];
    case 'bun':
      // Versions are listed from the default build; the baseline build is published alongside it.
      return [{ name: `@oven/bun-linux-${npmArch(arch)}`, range: '*' }];
    default:
      return [{ name: packageForTool(tool, '0.0.0', arch, () => true), range: '*' }];
  }
}

/**
 * The package holding the native pnpm binary for this machine; recent pnpm versions list it in
 * their optionalDependencies and run it instead of their JavaScript code.
 */
export function pnpmNativePackage(arch: string = process.arch): string {
  return `@pnpm/exe.linux-${npmArch(arch)}`;
}
