/**
 * mise.toml (docs/behaviour.md: Runtimes; Project files): a `[tools]` table naming tools and versions. slipway installs
 * deno, node and bun from it (fetched like every other toolchain); other tools get a warning.
 */
import { parse } from 'smol-toml';
import { PlanError } from '../plan.js';

export interface MiseTools {
  deno?: string;
  node?: string;
  bun?: string;
  warnings: string[];
}

const SUPPORTED = ['deno', 'node', 'bun'] as const;
type Supported = (typeof SUPPORTED)[number];

/** A tool's version as mise writes it: a string, `{ version = "..." }`, or a list (first wins). */
function versionOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return versionOf(value[0]);
  if (typeof value === 'object' && value !== null && 'version' in value) return versionOf((value as { version: unknown }).version);
  return undefined;
}

/**
 * The rule the parser says was broken (": unfinished string"), without the excerpt of the file
 * that follows it: the text is never quoted back. A reason that might carry text of the file
 * (a date library's message) is left out.
 */
function tomlRule(message: string): string {
  const reason = message
    .split('\n')[0]!
    .replace(/^Invalid TOML document:\s*/, '')
    .trim();
  return /^[a-z][a-z ,:-]{0,80}$/i.test(reason) ? `: ${reason}` : '';
}

export function parseMiseTools(text: string, file = 'mise.toml'): MiseTools {
  let doc: Record<string, unknown>;
  try {
    doc = parse(text) as Record<string, unknown>;
  } catch (error) {
    const e = error as Error & { line?: number; column?: number };
    const where = e.line !== undefined ? ` at line ${e.line}, column ${e.column}` : '';
    throw new PlanError(`${file} is not valid TOML${where}${tomlRule(e.message)}.`, `Fix ${file}${where}, commit and push again.`);
  }
  const result: MiseTools = { warnings: [] };
  const tools = doc.tools;
  if (tools === undefined) {
    result.warnings.push(`${file} has no [tools] table: nothing to install from it.`);
    return result;
  }
  if (typeof tools !== 'object' || tools === null || Array.isArray(tools)) {
    throw new PlanError(
      `${file}: "tools" must be a table ([tools]).`,
      `Declare tools as [tools] then lines like deno = "2", commit and push again.`,
    );
  }
  const unsupported: string[] = [];
  for (const [name, value] of Object.entries(tools)) {
    if (!(SUPPORTED as readonly string[]).includes(name)) {
      unsupported.push(name);
      continue;
    }
    const version = versionOf(value);
    if (!version) {
      throw new PlanError(
        `${file}: tools.${name} has no version.`,
        `Write ${name} = "<version>" or ${name} = "latest", commit and push again.`,
      );
    }
    result[name as Supported] = version;
  }
  if (unsupported.length > 0) {
    result.warnings.push(
      `${file} declares ${unsupported.join(', ')}: slipway installs only ${SUPPORTED.join(', ')} from mise.toml; the others are ignored. ` +
        'Remove them from [tools] or install them as npm dependencies.',
    );
  }
  return result;
}
