/**
 * How variables are written for people and files. The default (`NAME="value"`) is the
 * reference tool's format and what `env import` reads back, exactly: see env-file-parse.ts.
 */
import type { EnvSectionView, EnvVarView } from '../shared/api-types.js';

export type EnvVar = EnvVarView;
export type EnvSource = EnvSectionView;

/** The section of `slipway env` that holds the app's own variables, the only one import reads. */
export const OWN_SECTION = 'application';

/** Ends the header of every other section, so a reader (and `env import`) knows to leave it out. */
export const NOT_IMPORTED = ': not read by env import';

/**
 * Always double quotes, with newlines and tabs as they are. A `"` is escaped with one
 * backslash, and the backslashes right before it (or before the closing quote) are doubled, so
 * every value, even one ending in `\`, reads back unchanged.
 */
export function quoteEnvValue(value: string): string {
  const escaped = value.replace(/(\\*)("|$)/g, (_match, slashes: string, quote: string) =>
    quote === '"' ? '\\'.repeat(slashes.length * 2 + 1) + '"' : '\\'.repeat(slashes.length * 2),
  );
  return `"${escaped}"`;
}

/** `NAME="value"`. */
export function formatEnvLine({ name, value }: EnvVar): string {
  return `${name}=${quoteEnvValue(value)}`;
}

/** A line a POSIX shell can source: single quotes, with embedded single quotes escaped. */
export function formatShellLine({ name, value }: EnvVar): string {
  return `export ${name}='${value.replace(/'/g, `'\\''`)}'`;
}

function header(source: string): string {
  return source === OWN_SECTION ? `# ${source}` : `# ${source}${NOT_IMPORTED}`;
}

function shown(sections: EnvSource[]): EnvSource[] {
  return sections.filter((s) => s.env.length > 0 || s.source === OWN_SECTION);
}

/** `slipway env`: every section under its header; `env import` reads only the app's own. */
export function formatEnvSections(sections: EnvSource[]): string {
  return shown(sections)
    .map((s) => [header(s.source), ...s.env.map(formatEnvLine)].join('\n') + '\n')
    .join('');
}

/**
 * `slipway env --format shell`: sections come strongest first, so a name a stronger source
 * already set is left as a comment; sourcing the output gives the values the app receives.
 */
export function formatShellSections(sections: EnvSource[]): string {
  const set = new Set<string>();
  return shown(sections)
    .map((s) => {
      const lines = s.env.map((v) => {
        if (set.has(v.name)) return `# ${v.name}: the value set above wins`;
        set.add(v.name);
        return formatShellLine(v);
      });
      return [`# ${s.source}`, ...lines].join('\n') + '\n';
    })
    .join('');
}
