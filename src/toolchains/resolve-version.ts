/**
 * Turns a version request (`24`, `23.11`, `v22.15.1`, `^24.1`, `latest`, `lts`) into the highest
 * exact version available. Matching is semver's, never hand-rolled.
 */
import semver from 'semver';
import { PlanError } from '../core/errors.js';
import { nodeLtsMajors, nodeMajorForCodename } from './node-releases.js';

const ACCEPTED_FORMS = '24, 23.11, 22.15.1, v24.11.0, >=22, 22.x, ^24.1, latest, *';
const NEAREST_COUNT = 5;

export interface ResolveOptions {
  /** Day used to decide which Node lines are LTS (default: now). */
  today?: Date;
}

/** Valid exact versions, ascending, without duplicates. */
function sortedVersions(available: readonly string[]): string[] {
  const valid = new Set<string>();
  for (const v of available) {
    const clean = semver.valid(v);
    if (clean) valid.add(clean);
  }
  return semver.sort([...valid]);
}

function list(versions: readonly string[]): string {
  return versions.join(', ');
}

/** Up to five versions on each side of where the request would have landed. */
function nearestVersions(range: string | null, sorted: readonly string[]): string {
  const pivot = range ? semver.minVersion(range) : null;
  if (!pivot) return `the newest available are ${list(sorted.slice(-NEAREST_COUNT).reverse())}`;
  const below = sorted
    .filter((v) => semver.lt(v, pivot))
    .slice(-NEAREST_COUNT)
    .reverse();
  const above = sorted.filter((v) => semver.gte(v, pivot)).slice(0, NEAREST_COUNT);
  const parts: string[] = [];
  if (below.length > 0) parts.push(`below: ${list(below)}`);
  if (above.length > 0) parts.push(`above: ${list(above)}`);
  return `nearest available versions ${parts.join('; ')}`;
}

/**
 * The semver range a request stands for, or null when it is not one.
 * `lts` (node only) becomes the newest LTS major that has a published version.
 */
function requestToRange(tool: string, request: string, sorted: readonly string[], today: Date): string | null {
  const lower = request.toLowerCase();
  if (lower === 'latest' || lower === 'current') return '*';
  const lts = /^lts(?:\/(.+))?$/.exec(lower);
  if (lts) {
    if (tool !== 'node') {
      throw new PlanError(`The ${tool} version "${request}" is not valid: "lts" exists only for node. Accepted forms: ${ACCEPTED_FORMS}.`);
    }
    const codename = lts[1];
    if (codename !== undefined && codename !== '*' && codename !== 'latest') {
      const major = nodeMajorForCodename(codename);
      return major === undefined ? null : `${major}.x`;
    }
    const published = nodeLtsMajors(today).find((major) => sorted.some((v) => semver.major(v) === major));
    return published === undefined ? `${nodeLtsMajors(today)[0] ?? 0}.x` : `${published}.x`;
  }
  return semver.validRange(request);
}

/**
 * The highest version in `available` matching `request`.
 * Throws PlanError naming the request and the nearest available versions when nothing matches
 * or when the request is not a version or range.
 */
export function resolveVersion(tool: string, request: string, available: string[], options: ResolveOptions = {}): string {
  const trimmed = request.trim();
  const sorted = sortedVersions(available);
  const newest = sorted.at(-1);
  if (newest === undefined) {
    throw new PlanError(
      `Cannot resolve ${tool} version "${trimmed}": no ${tool} versions are known.`,
      'The version list comes from the npm registry configured for npm (`npm config get registry`); check that it is reachable.',
    );
  }
  if (trimmed === '') {
    throw new PlanError(
      `The ${tool} version request is empty. Accepted forms: ${ACCEPTED_FORMS}.`,
      `Newest available: ${list(sorted.slice(-NEAREST_COUNT).reverse())}.`,
    );
  }
  const range = requestToRange(tool, trimmed, sorted, options.today ?? new Date());
  if (range === null) {
    throw new PlanError(
      `The ${tool} version "${trimmed}" is not a version or a semver range. Accepted forms: ${ACCEPTED_FORMS}${tool === 'node' ? ', lts' : ''}; ` +
        `the newest available are ${list(sorted.slice(-NEAREST_COUNT).reverse())}.`,
      `Use one of the accepted forms, for example "${semver.major(newest)}".`,
    );
  }
  const match = semver.maxSatisfying(sorted, range);
  if (match === null) {
    throw new PlanError(
      `No available ${tool} version matches "${trimmed}"; ${nearestVersions(range, sorted)}.`,
      `Ask for one of the available versions or a wider range (for example "${semver.major(newest)}").`,
    );
  }
  return match;
}
