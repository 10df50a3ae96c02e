/**
 * Release lines of the runtimes slipway offers, and which versions are end of life.
 * docs/behaviour.md, Versions: end-of-life versions are marked as such in the list of available versions.
 */
import semver from 'semver';

/** The defaults of docs/behaviour.md, Versions. */
export const DEFAULT_NODE_VERSION = '24.11.0';
export const DEFAULT_NPM_VERSION = '11.6.1';
export const DEFAULT_BUN_VERSION = '1.3.1';
export const DEFAULT_YARN1_VERSION = '1.22.22';

export interface NodeReleaseLine {
  major: number;
  /** LTS codename, usable as `lts/<codename>`. */
  codename?: string;
  /** Day the line became (or becomes) LTS; odd majors never do. */
  ltsStart?: string;
  /** Last day of support (ISO date, UTC). */
  endOfLife: string;
}

/**
 * Node.js release schedule (nodejs/Release), majors 18..26. Majors older than 18 are all
 * end of life; majors newer than 26 are not listed yet and count as supported.
 */
export const NODE_RELEASE_LINES: readonly NodeReleaseLine[] = [
  { major: 18, codename: 'hydrogen', ltsStart: '2022-10-25', endOfLife: '2025-04-30' },
  { major: 19, endOfLife: '2023-06-01' },
  { major: 20, codename: 'iron', ltsStart: '2023-10-24', endOfLife: '2026-04-30' },
  { major: 21, endOfLife: '2024-06-01' },
  { major: 22, codename: 'jod', ltsStart: '2024-10-29', endOfLife: '2027-04-30' },
  { major: 23, endOfLife: '2025-06-01' },
  { major: 24, codename: 'krypton', ltsStart: '2025-10-28', endOfLife: '2028-04-30' },
  { major: 25, endOfLife: '2026-06-01' },
  { major: 26, ltsStart: '2026-10-28', endOfLife: '2029-04-30' },
];

const OLDEST_LISTED_MAJOR = Math.min(...NODE_RELEASE_LINES.map((line) => line.major));

/** `YYYY-MM-DD` of a date in UTC, comparable as a string with the schedule's dates. */
function isoDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

function majorOf(tool: string, version: string): semver.SemVer {
  const parsed = semver.parse(version.trim().replace(/^v/, ''));
  if (!parsed) throw new Error(`Cannot tell whether ${tool} "${version}" is end of life: it is not an exact version like 24.11.0.`);
  return parsed;
}

/** A Node line is end of life once the day after its last day of support has begun (UTC). */
function nodeLineIsEndOfLife(major: number, today: Date): boolean {
  if (major < OLDEST_LISTED_MAJOR) return true;
  const line = NODE_RELEASE_LINES.find((l) => l.major === major);
  if (!line) return false;
  return isoDay(today) > line.endOfLife;
}

/**
 * Node majors that are LTS today (LTS has started and support has not ended), newest first.
 * Falls back to the even majors not yet end of life when none has started LTS, which cannot
 * happen with the table above but keeps `lts` meaningful if the table is ever trimmed.
 */
export function nodeLtsMajors(today: Date = new Date()): number[] {
  const day = isoDay(today);
  const lts = NODE_RELEASE_LINES.filter((l) => l.ltsStart !== undefined && l.ltsStart <= day && day <= l.endOfLife);
  const chosen = lts.length > 0 ? lts : NODE_RELEASE_LINES.filter((l) => l.major % 2 === 0 && day <= l.endOfLife);
  return chosen.map((l) => l.major).sort((a, b) => b - a);
}

/** The major of an LTS codename (`jod` -> 22), or undefined. */
export function nodeMajorForCodename(codename: string): number | undefined {
  const wanted = codename.toLowerCase();
  return NODE_RELEASE_LINES.find((l) => l.codename === wanted)?.major;
}

/**
 * The two newest `major.minor` lines among the given Bun versions.
 *
 * Bun publishes no support schedule: only the newest release gets fixes. slipway marks as end
 * of life every Bun minor older than the latest two, so the previous minor stays usable for a
 * while after a new one ships, while old lines are clearly flagged.
 */
function newestBunMinors(bunVersions: readonly string[]): semver.SemVer[] {
  const minors = new Map<string, semver.SemVer>();
  for (const v of bunVersions) {
    const parsed = semver.parse(v);
    if (!parsed || parsed.prerelease.length > 0) continue;
    const key = `${parsed.major}.${parsed.minor}`;
    if (!minors.has(key)) minors.set(key, new semver.SemVer(`${key}.0`));
  }
  return [...minors.values()].sort(semver.rcompare).slice(0, 2);
}

/**
 * Whether a Node or Bun version is end of life.
 * - node: its major's end-of-life date has passed (`today`, UTC), or the major is older than 18.
 * - bun: its minor is older than the latest two minors among `bunVersions` (all published Bun
 *   versions); without that list, the default Bun version stands for the newest one.
 */
export function isEndOfLife(
  tool: 'node' | 'bun',
  version: string,
  today: Date = new Date(),
  bunVersions: readonly string[] = [DEFAULT_BUN_VERSION],
): boolean {
  const parsed = majorOf(tool, version);
  if (tool === 'node') return nodeLineIsEndOfLife(parsed.major, today);
  const known = newestBunMinors(bunVersions);
  const [latest, second] = known.length > 0 ? known : newestBunMinors([DEFAULT_BUN_VERSION]);
  if (!latest) throw new Error(`The default Bun version "${DEFAULT_BUN_VERSION}" is not an exact version like 1.3.1.`);
  // With a single known minor, the one numbered just before it is the second "latest".
  const oldestSupported = second ?? (latest.minor === 0 ? latest : new semver.SemVer(`${latest.major}.${latest.minor - 1}.0`));
  const ownMinor = new semver.SemVer(`${parsed.major}.${parsed.minor}.0`);
  return semver.lt(ownMinor, oldestSupported);
}
