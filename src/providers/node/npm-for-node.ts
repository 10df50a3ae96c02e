/**
 * Which npm goes with a Node version. The Node binaries slipway fetches carry no npm, so npm is
 * fetched beside them. docs/behaviour.md (Versions) fixes npm 11.6.1 for the default Node; slipway keeps that npm for
 * every Node it runs on, and for older Node picks the newest npm line whose `engines.node`
 * accepts it (the ranges below are those lines' own engines fields), because npm 11 refuses
 * to start on them.
 */
import semver from 'semver';
import { DEFAULT_NPM_VERSION } from '../../toolchains/node-releases.js';

export interface NpmLine {
  /** Range of npm versions to pick from (`*` for the pinned default). */
  npmRange: string;
  /** Node versions that npm line supports. */
  nodeRange: string;
}

/** The oldest line, for any Node the lines above refuse. */
const OLDEST_NPM_LINE: NpmLine = { npmRange: '6.x', nodeRange: '*' };

export const NPM_LINES: readonly NpmLine[] = [
  { npmRange: DEFAULT_NPM_VERSION, nodeRange: '^20.17.0 || >=22.9.0' },
  { npmRange: '10.x', nodeRange: '^18.17.0 || >=20.5.0' },
  { npmRange: '9.x', nodeRange: '^14.17.0 || ^16.13.0 || >=18.0.0' },
  { npmRange: '8.x', nodeRange: '^12.13.0 || ^14.15.0 || >=16.0.0' },
  OLDEST_NPM_LINE,
];

/** The npm range to resolve for a given exact Node version. */
export function npmRangeForNode(nodeVersion: string): NpmLine {
  return NPM_LINES.find((line) => semver.satisfies(nodeVersion, line.nodeRange)) ?? OLDEST_NPM_LINE;
}
