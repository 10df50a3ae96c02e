/**
 * The `packageManager` field of package.json: `<manager>@<version>`, optionally followed by
 * `+<algorithm>.<hash>` (Corepack's form). It picks the pnpm or Yarn version (docs/behaviour.md, Versions).
 */
import semver from 'semver';
import { PlanError } from '../plan.js';

export type DeclaredManagerName = 'npm' | 'pnpm' | 'yarn' | 'bun';

export interface DeclaredPackageManager {
  name: DeclaredManagerName;
  /** Version as written, without the hash. */
  version: string;
  /** The field as written, for messages. */
  raw: string;
}

const KNOWN: readonly DeclaredManagerName[] = ['npm', 'pnpm', 'yarn', 'bun'];

export function parsePackageManagerField(raw: string | undefined): DeclaredPackageManager | undefined {
  if (raw === undefined) return undefined;
  const match = /^(?<name>[a-z]+)@(?<version>[^+\s]+)(?:\+[A-Za-z0-9]+\.[A-Za-z0-9+/=]+)?$/.exec(raw.trim());
  const hint = 'Write it as <manager>@<exact version>, for example "pnpm@10.20.0" or "yarn@4.10.3", commit and push again.';
  if (match?.groups?.name === undefined || match.groups.version === undefined) {
    throw new PlanError(`package.json: "packageManager" is "${raw}", which is not of the form <manager>@<version>.`, hint);
  }
  const name = match.groups.name as DeclaredManagerName;
  if (!KNOWN.includes(name)) {
    throw new PlanError(`package.json: "packageManager" names "${match.groups.name}"; slipway knows ${KNOWN.join(', ')}.`, hint);
  }
  const version = match.groups.version.replace(/^v/, '');
  if (semver.validRange(version) === null) {
    throw new PlanError(`package.json: "packageManager" has version "${match.groups.version}", which is not a version.`, hint);
  }
  return { name, version, raw: raw.trim() };
}

/** Major version of a declared version or range (the lowest version it allows). */
export function declaredMajor(declared: DeclaredPackageManager): number {
  const min = semver.minVersion(declared.version);
  return min ? min.major : 0;
}
