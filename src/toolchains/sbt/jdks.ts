/**
 * JDKs installed on this machine. sbt and the staged app run on one of them: the `java` on
 * PATH by default, another when CC_JAVA_VERSION asks for its major version.
 */
import { access, constants, readdir, readFile, realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { PlanError } from '../../core/errors.js';
import { runTool } from './run-tool.js';

export interface InstalledJdk {
  major: number;
  javaHome: string;
  /** Full version as the JDK reports it (e.g. 17.0.15). */
  version: string;
  /** Vendor from the JDK's `release` file, when it says. */
  implementor?: string;
  /** True for the JDK whose `java` comes first on PATH: the machine's default. */
  isDefault: boolean;
}

/** Folders whose sub-folders may be JDKs (Debian, Temurin and Oracle packages, tarball installs, SDKMAN). */
function searchRoots(): string[] {
  return ['/usr/lib/jvm', '/usr/java', '/opt/java', '/opt', join(homedir(), '.sdkman/candidates/java'), join(homedir(), '.jdks')];
}

/** Major version from a Java version string: "17.0.15" -> 17, "1.8.0_392" -> 8, "25" -> 25. */
export function javaMajor(version: string): number | undefined {
  const match = /^(\d+)(?:\.(\d+))?/.exec(version.trim());
  if (!match) return undefined;
  const first = Number(match[1]);
  if (first === 1 && match[2] !== undefined) return Number(match[2]);
  return first;
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function readRelease(home: string): Promise<{ version?: string; implementor?: string }> {
  const text = await readFile(join(home, 'release'), 'utf8').catch(() => '');
  const field = (name: string) => new RegExp(`^${name}="?([^"\\n]*)"?`, 'm').exec(text)?.[1];
  return { version: field('JAVA_VERSION'), implementor: field('IMPLEMENTOR') };
}

/** Asks the JDK itself when it has no `release` file (some distribution packages). */
async function askVersion(home: string): Promise<string | undefined> {
  const run = await runTool([join(home, 'bin', 'java'), '-XshowSettings:properties', '-version'], { timeoutMs: 30_000 });
  return /java\.version = (\S+)/.exec(run.stderr + run.stdout)?.[1];
}

async function describe(home: string, isDefault: boolean): Promise<InstalledJdk | undefined> {
  if (!(await isExecutable(join(home, 'bin', 'java')))) return undefined;
  const release = await readRelease(home);
  const version = release.version ?? (await askVersion(home));
  const major = version ? javaMajor(version) : undefined;
  if (!version || major === undefined) return undefined;
  return { major, javaHome: home, version, implementor: release.implementor, isDefault };
}

/** The JDK folder of the first `java` on PATH, following the alternatives symlinks. */
async function defaultJavaHome(pathVariable: string | undefined): Promise<string | undefined> {
  for (const dir of (pathVariable ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'java');
    if (!(await isExecutable(candidate))) continue;
    const real = await realpath(candidate).catch(() => undefined);
    // .../bin/java -> the JDK home two levels up.
    return real ? dirname(dirname(real)) : undefined;
  }
  return undefined;
}

export interface JdkSearch {
  /** Folders to scan instead of the usual ones. */
  roots?: string[];
  /** PATH to find the default `java` on (defaults to this process's PATH). */
  path?: string;
  /** JAVA_HOME to include (defaults to this process's JAVA_HOME). */
  javaHome?: string;
}

export async function listInstalledJdks(search: JdkSearch = {}): Promise<InstalledJdk[]> {
  const defaultHome = await defaultJavaHome(search.path ?? process.env.PATH);
  const candidates: string[] = [];
  if (defaultHome) candidates.push(defaultHome);
  const javaHome = search.javaHome ?? process.env.JAVA_HOME;
  if (javaHome) candidates.push(javaHome);
  for (const root of search.roots ?? searchRoots()) {
    const entries = await readdir(root, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (entry.isDirectory() || entry.isSymbolicLink()) candidates.push(join(root, entry.name));
    }
  }
  const seen = new Set<string>();
  const found: InstalledJdk[] = [];
  const defaultReal = defaultHome ? await realpath(defaultHome).catch(() => defaultHome) : undefined;
  for (const candidate of candidates) {
    const real = await realpath(candidate).catch(() => undefined);
    if (!real || seen.has(real)) continue;
    seen.add(real);
    const jdk = await describe(real, real === defaultReal);
    if (jdk) found.push(jdk);
  }
  // The default first, then by major version: the order selectJdk prefers.
  return found.sort((a, b) => Number(b.isDefault) - Number(a.isDefault) || a.major - b.major || a.javaHome.localeCompare(b.javaHome));
}

export function describeJdks(jdks: InstalledJdk[]): string {
  if (jdks.length === 0) return 'no JDK';
  return jdks
    .map((j) => `${j.major} (${j.version}${j.implementor ? `, ${j.implementor}` : ''}, ${j.javaHome}${j.isDefault ? ', default' : ''})`)
    .join('; ');
}

/** Parses CC_JAVA_VERSION: a major version, optionally written in full ("21", "1.8", "17.0.15"). */
export function parseRequestedJava(requested: string): number | undefined {
  const value = requested.trim();
  if (!/^\d{1,3}(\.\d{1,3}){0,2}([._+-][0-9A-Za-z]+)?$/.test(value)) return undefined;
  return javaMajor(value);
}

/**
 * The JDK to build and run with. Without a request: the machine's default `java`.
 * With one: an installed JDK of that major version, or a PlanError listing what is installed.
 */
export async function selectJdk(requested: string | undefined, search: JdkSearch = {}): Promise<InstalledJdk> {
  const jdks = await listInstalledJdks(search);
  const majors = [...new Set(jdks.map((j) => j.major))].sort((a, b) => a - b);
  if (requested === undefined || requested.trim() === '') {
    const chosen = jdks.find((j) => j.isDefault) ?? jdks.at(-1);
    if (!chosen) {
      throw new PlanError(
        'No JDK is installed on this machine: sbt needs Java to run.',
        'Install a JDK (for example the openjdk-17-jdk-headless Debian package).',
      );
    }
    return chosen;
  }
  const major = parseRequestedJava(requested);
  if (major === undefined) {
    throw new PlanError(
      `CC_JAVA_VERSION=${JSON.stringify(requested)} is not a Java version.`,
      `Use a major version such as ${majors.join(' or ') || '17'}. Installed: ${describeJdks(jdks)}.`,
    );
  }
  const chosen = jdks.find((j) => j.major === major);
  if (!chosen) {
    throw new PlanError(
      `CC_JAVA_VERSION=${requested} asks for Java ${major}, which is not installed on this machine. Installed JDKs: ${describeJdks(jdks)}.`,
      majors.length > 0
        ? `Set CC_JAVA_VERSION to one of ${majors.join(', ')}, or remove it to use the default Java ${jdks.find((j) => j.isDefault)?.major ?? majors.at(-1)}.`
        : 'Install a JDK on the build machine.',
    );
  }
  return chosen;
}
