import { FixableError } from './errors.js';

/**
 * Where an app wants a bucket: `CC_FS_BUCKET=<path>:<bucket host>` (the reference's variable and
 * form), and for more buckets `CC_FS_BUCKET_1`, `CC_FS_BUCKET_2`... (any number after the
 * underscore). The path is inside the app's folder, as on the reference: `/uploads` is
 * `<app root>/uploads`. The value comes from the tenant: every rule below is a refusal.
 */
export interface BucketMountRequest {
  /** The variable that asked for it, named in messages. */
  variable: string;
  /** The path inside the app's folder, without its leading `/` (`uploads`, `data/files`). */
  path: string;
  /** The bucket's host value (its add-on's `BUCKET_HOST`). */
  host: string;
}

export const BUCKET_VARIABLE = /^CC_FS_BUCKET(?:_[0-9]{1,4})?$/;
const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
const HOST = /^[a-z0-9][a-z0-9.-]{0,252}$/;
const MAX_PATH = 1024;

function refused(variable: string, why: string): FixableError {
  return new FixableError(
    `${variable} is not a bucket mount: ${why}.`,
    `Set it to <path>:<bucket host>, e.g. ${variable}=/uploads:<the BUCKET_HOST of the bucket> (\`slipway addon env <bucket>\` prints it).`,
  );
}

/**
 * The path of a request, checked: absolute, made of plain names (letters, digits, `.`, `_`, `-`;
 * no `.` or `..`, no hidden first character), the app's folder itself refused. Returned without
 * its leading slash, ready to be joined under the app's folder.
 */
export function bucketMountPath(variable: string, path: string): string {
  if (!path.startsWith('/')) throw refused(variable, `the path must start with "/" (it is inside the app's folder)`);
  if (path.length > MAX_PATH) throw refused(variable, `the path is longer than ${MAX_PATH} characters`);
  const segments = path.split('/').filter((s) => s !== '');
  if (segments.length === 0) throw refused(variable, `"/" is the app's folder itself; name a folder inside it`);
  for (const segment of segments) {
    if (segment === '.' || segment === '..') throw refused(variable, `the path may not hold "." or ".."`);
    if (!SEGMENT.test(segment)) {
      throw refused(variable, 'each part of the path is made of letters, digits, ".", "_" and "-", and does not start with "." or "-"');
    }
  }
  return segments.join('/');
}

/** Every bucket an environment asks for, in the order of the variables' names; bad values are refused. */
export function bucketMountRequests(env: Readonly<Record<string, string>>): BucketMountRequest[] {
  const names = Object.keys(env)
    .filter((name) => BUCKET_VARIABLE.test(name))
    .sort((a, b) => a.length - b.length || a.localeCompare(b));
  const requests: BucketMountRequest[] = [];
  for (const variable of names) {
    const value = env[variable]!.trim();
    const colon = value.lastIndexOf(':');
    if (colon <= 0) throw refused(variable, 'it has no ":" between the path and the bucket host');
    const host = value.slice(colon + 1).toLowerCase();
    if (!HOST.test(host)) throw refused(variable, 'the bucket host is not a host name');
    const path = bucketMountPath(variable, value.slice(0, colon));
    for (const other of requests) {
      if (other.path === path || path.startsWith(`${other.path}/`) || other.path.startsWith(`${path}/`)) {
        throw refused(variable, `its path overlaps the one of ${other.variable} (/${other.path}); give each bucket a folder of its own`);
      }
    }
    requests.push({ variable, path, host });
  }
  return requests;
}

/** The name of the next free variable (`CC_FS_BUCKET`, then `CC_FS_BUCKET_1`, ...) for `link-addon --mount`. */
export function nextBucketVariable(taken: Iterable<string>): string {
  const names = new Set(taken);
  if (!names.has('CC_FS_BUCKET')) return 'CC_FS_BUCKET';
  for (let n = 1; ; n++) if (!names.has(`CC_FS_BUCKET_${n}`)) return `CC_FS_BUCKET_${n}`;
}
