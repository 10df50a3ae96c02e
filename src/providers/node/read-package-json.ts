/**
 * Reads package.json and checks the fields slipway uses (docs/behaviour.md, Project files: name, version, main,
 * scripts, dependencies, engines, packageManager). A broken file fails the build early with
 * the position of the problem, instead of failing later inside a package manager.
 */
import { PlanError } from '../plan.js';
import type { UntrustedTree } from '../../sandbox/untrusted-tree.js';
import { findJsonError } from './json-error-position.js';

export interface PackageJson {
  name?: string;
  version?: string;
  main?: string;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  engines: Record<string, string>;
  packageManager?: string;
  /** Present (true) when package.json declares workspaces. */
  workspaces?: true;
}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function optionalString(json: JsonObject, field: string, file: string): string | undefined {
  const value = json[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    throw new PlanError(
      `${file}: "${field}" must be a string, but it is ${typeName(value)}.`,
      `Fix "${field}" in ${file}, commit and push again.`,
    );
  }
  return value;
}

function stringMap(json: JsonObject, field: string, file: string): Record<string, string> {
  const value = json[field];
  if (value === undefined) return {};
  if (!isObject(value)) {
    throw new PlanError(
      `${file}: "${field}" must be an object of strings, but it is ${typeName(value)}.`,
      `Fix "${field}" in ${file}, commit and push again.`,
    );
  }
  const result: Record<string, string> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (typeof entry !== 'string') {
      throw new PlanError(
        `${file}: "${field}.${key}" must be a string, but it is ${typeName(entry)}.`,
        `Fix "${field}.${key}" in ${file}, commit and push again.`,
      );
    }
    result[key] = entry;
  }
  return result;
}

/** Parses the text of a package.json; `file` names it in messages. */
export function parsePackageJson(rawText: string, file = 'package.json'): PackageJson {
  // npm and the other managers accept a leading byte order mark; so does slipway.
  const text = rawText.charCodeAt(0) === 0xfeff ? rawText.slice(1) : rawText;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    const where = findJsonError(text);
    if (where) {
      // Position and rule only: the text may come from a file read with root's rights.
      throw new PlanError(
        `${file} is not valid JSON: ${where.reason} at line ${where.line}, column ${where.column}.`,
        `Fix ${file} at line ${where.line}, column ${where.column} (check it with \`node -e 'JSON.parse(require("fs").readFileSync("${file}","utf8"))'\`), commit and push again.`,
      );
    }
    // V8's message quotes the text; the scanner found nothing, so say no more than that.
    throw new PlanError(
      `${file} is not valid JSON.`,
      `Fix ${file} (check it with \`node -e 'JSON.parse(require("fs").readFileSync("${file}","utf8"))'\`), commit and push again.`,
    );
  }
  if (!isObject(parsed)) {
    throw new PlanError(
      `${file} must hold a JSON object ({ ... }), but it holds ${typeName(parsed)}.`,
      `Put the package description in an object, commit and push again.`,
    );
  }
  return {
    name: optionalString(parsed, 'name', file),
    version: optionalString(parsed, 'version', file),
    main: optionalString(parsed, 'main', file),
    scripts: stringMap(parsed, 'scripts', file),
    dependencies: stringMap(parsed, 'dependencies', file),
    devDependencies: stringMap(parsed, 'devDependencies', file),
    engines: stringMap(parsed, 'engines', file),
    packageManager: optionalString(parsed, 'packageManager', file),
    ...(parsed.workspaces !== undefined ? { workspaces: true as const } : {}),
  };
}

/**
 * Reads `package.json` at the repository's root; a missing file is a PlanError saying what is
 * needed, a link leading out of the repository (or a fifo, a folder...) is refused.
 */
export async function readPackageJson(tree: UntrustedTree): Promise<PackageJson> {
  const text = await tree.readText('package.json');
  if (text === undefined) {
    throw new PlanError(
      'No package.json at the root of the repository: a Node.js or Bun app needs one.',
      'Create package.json (`npm init -y`), add a start script, commit and push again.',
    );
  }
  return parsePackageJson(text);
}
