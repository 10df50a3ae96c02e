/**
 * Which Maven repository this machine uses, read from Maven's own configuration so that sbt
 * downloads from the same place Maven does (a company mirror, or Maven's central repository)
 * and never from a host written in our code.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTool, tail } from './run-tool.js';

export interface MavenRepository {
  url: string;
  /** Where the URL came from, shown in the build log. */
  source: string;
}

export interface MavenMirror {
  id: string;
  mirrorOf: string;
  url: string;
  blocked: boolean;
}

/** The text inside the first `<tag>...</tag>` of an XML fragment. */
function element(xml: string, tag: string): string | undefined {
  const match = new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(xml);
  return match ? decodeXml(match[1]!.trim()) : undefined;
}

function decodeXml(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

function stripComments(xml: string): string {
  return xml.replace(/<!--[\s\S]*?-->/g, '');
}

/** Mirrors declared in a settings.xml (effective or hand-written). */
export function parseMirrors(settingsXml: string): MavenMirror[] {
  const mirrors: MavenMirror[] = [];
  for (const match of stripComments(settingsXml).matchAll(/<mirror>([\s\S]*?)<\/mirror>/g)) {
    const body = match[1]!;
    const url = element(body, 'url');
    const mirrorOf = element(body, 'mirrorOf');
    if (!url || !mirrorOf) continue;
    mirrors.push({ id: element(body, 'id') ?? '', mirrorOf, url, blocked: element(body, 'blocked') === 'true' });
  }
  return mirrors;
}

/**
 * Maven's `mirrorOf` rule for one repository: a comma list of ids, `*`, `external:*`,
 * `external:http:*`, with `!id` exclusions taking precedence.
 */
export function mirrorMatches(mirrorOf: string, repository: { id: string; url: string }): boolean {
  const patterns = mirrorOf
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  if (patterns.some((p) => p === `!${repository.id}`)) return false;
  let host = '';
  let protocol = '';
  try {
    const parsed = new URL(repository.url);
    host = parsed.hostname;
    protocol = parsed.protocol;
  } catch {
    // An unparsable URL only matches by id or `*`.
  }
  const external = protocol !== 'file:' && host !== 'localhost' && host !== '127.0.0.1' && host !== '';
  return patterns.some((p) => {
    if (p.startsWith('!')) return false;
    if (p === '*' || p === repository.id) return true;
    if (p === 'external:*') return external;
    if (p === 'external:http:*') return external && protocol === 'http:';
    return false;
  });
}

/** Repositories (`id`, `url`) printed by `help:evaluate -Dexpression=project.repositories`. */
export function parseRepositories(evaluated: string): Array<{ id: string; url: string }> {
  const found: Array<{ id: string; url: string }> = [];
  for (const match of evaluated.matchAll(/<org\.apache\.maven\.model\.Repository>([\s\S]*?)<\/org\.apache\.maven\.model\.Repository>/g)) {
    const id = element(match[1]!, 'id');
    const url = element(match[1]!, 'url');
    if (id && url) found.push({ id, url });
  }
  return found;
}

/**
 * The repository to use for the central repository: the first unblocked mirror that covers it,
 * otherwise the central repository itself. Pure, so the rule is testable without Maven.
 */
export function chooseRepository(central: { id: string; url: string }, mirrors: MavenMirror[]): MavenRepository {
  const mirror = mirrors.find((m) => !m.blocked && mirrorMatches(m.mirrorOf, central));
  if (mirror) return { url: mirror.url, source: `Maven mirror "${mirror.id}" (mirrorOf ${mirror.mirrorOf})` };
  return { url: central.url, source: `Maven's central repository (id "${central.id}")` };
}

async function mavenOutput(args: string[], cwd: string): Promise<string> {
  const run = await runTool(['mvn', '-B', '-q', '--no-transfer-progress', ...args], { cwd, timeoutMs: 5 * 60_000 });
  if (run.code !== 0) {
    throw new Error(
      `Reading Maven's configuration failed (mvn ${args[0]} exited with ${run.code}):\n${tail(run.stdout + '\n' + run.stderr)}\n` +
        'Check that Maven (the `maven` Debian package) is installed and that `mvn help:effective-settings` works for this user.',
    );
  }
  return run.stdout;
}

/** Asks Maven itself; takes a few seconds (more the first time, while Maven fetches its help plugin). */
export async function discoverMavenRepository(): Promise<MavenRepository> {
  // An empty folder, so a pom.xml in the current directory cannot change the answer.
  const dir = await mkdtemp(join(tmpdir(), 'slipway-mvn-'));
  try {
    const settingsFile = join(dir, 'effective-settings.xml');
    // One after the other: two Maven runs writing the same local repository at once can corrupt it.
    await mavenOutput(['help:effective-settings', `-Doutput=${settingsFile}`], dir);
    const evaluated = await mavenOutput(['help:evaluate', '-Dexpression=project.repositories', '-DforceStdout'], dir);
    const mirrors = parseMirrors(await readFile(settingsFile, 'utf8'));
    const central = parseRepositories(evaluated).find((r) => r.id === 'central');
    if (!central) {
      throw new Error(
        `Maven reports no repository with id "central" (help:evaluate printed:\n${tail(evaluated)}).\n` +
          'Configure a central repository or a mirror of it in ~/.m2/settings.xml.',
      );
    }
    return chooseRepository(central, mirrors);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

let cached: Promise<MavenRepository> | undefined;

/** Same answer for the life of the process: Maven's configuration does not change under a running daemon. */
export function machineMavenRepository(): Promise<MavenRepository> {
  if (!cached) {
    cached = discoverMavenRepository();
    cached.catch(() => {
      cached = undefined;
    });
  }
  return cached;
}
