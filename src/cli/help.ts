import type { Command, OptionDefinition } from './command.js';

/** Help text fits a 100-column terminal. */
export const HELP_WIDTH = 100;

/** What each topic (the first word of several commands) is about. */
const TOPICS: Record<string, string> = {
  addon: 'Add-ons (databases, caches) of your organisations',
  config: "The application's platform settings",
  env: "The application's environment variables",
  org: 'Organisations and their members',
  'published-config': 'Configuration an application exposes to the applications linked to it',
  service: 'Links from the application to add-ons and other applications',
  'ssh-keys': 'SSH keys that may git push',
  tokens: 'API tokens',
  user: 'Users (administrators)',
  completion: 'Shell completion',
};

/** Words of text wrapped to `width` columns (a word longer than that keeps its own line). */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    for (const word of paragraph.split(/ +/)) {
      if (line && line.length + 1 + word.length > width) {
        lines.push(line);
        line = word;
      } else {
        line = line ? `${line} ${word}` : word;
      }
    }
    lines.push(line);
  }
  return lines;
}

/** A usage line wrapped between its bracketed groups, never inside one. */
export function wrapUsage(usage: string, width: number): string[] {
  const groups: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of usage) {
    if (char === ' ' && depth === 0) {
      if (current) groups.push(current);
      current = '';
      continue;
    }
    if (char === '[' || char === '<') depth++;
    if (char === ']' || char === '>') depth = Math.max(0, depth - 1);
    current += char;
  }
  if (current) groups.push(current);
  const lines: string[] = [];
  let line = '';
  for (const group of groups) {
    if (line && line.length + 1 + group.length > width) {
      lines.push(line);
      line = `    ${group}`;
    } else {
      line = line ? `${line} ${group}` : group;
    }
  }
  lines.push(line);
  return lines;
}

/** Two columns: a label, then text wrapped beside it (below it when the label is too wide). */
function table(rows: Array<[string, string]>, indent = 2, maxLabel = 28): string {
  const labelWidth = Math.min(maxLabel, Math.max(0, ...rows.map(([label]) => label.length)));
  const textWidth = HELP_WIDTH - indent - labelWidth - 2;
  const pad = ' '.repeat(indent);
  let out = '';
  for (const [label, text] of rows) {
    const lines = wrap(text, textWidth);
    if (label.length > labelWidth) {
      out += `${pad}${label}\n`;
      for (const line of lines) out += `${pad}${' '.repeat(labelWidth + 2)}${line}\n`;
      continue;
    }
    out += `${pad}${label.padEnd(labelWidth)}  ${lines[0]}\n`;
    for (const line of lines.slice(1)) out += `${pad}${' '.repeat(labelWidth + 2)}${line}\n`;
  }
  return out;
}

/** One line about a topic, for listings and shell completion. */
export function topicSummary(topic: string): string {
  return TOPICS[topic] ?? `Commands about ${topic}`;
}

export function commandName(command: Command): string {
  return command.path.join(' ');
}

/** Topics: first words shared by several commands (`addon`, `env`). */
export function topics(commands: Command[]): string[] {
  const counts = new Map<string, number>();
  for (const c of commands) counts.set(c.path[0]!, (counts.get(c.path[0]!) ?? 0) + 1);
  return [...counts]
    .filter(([topic, n]) => n > 1 || commands.some((c) => c.path[0] === topic && c.path.length > 1))
    .map(([topic]) => topic);
}

export function subCommands(commands: Command[], path: string[]): Command[] {
  return commands.filter((c) => c.path.length === path.length + 1 && path.every((w, i) => c.path[i] === w));
}

/** The options every command accepts besides its own, as main() adds them. */
export function commonOptions(command: Command): Record<string, OptionDefinition> {
  const formats = command.formats ?? (command.printsData ? ['human', 'json'] : []);
  return {
    ...(formats.length
      ? {
          format: {
            type: 'string',
            short: 'F',
            value: '<format>',
            choices: formats,
            description: `Output format: ${formats.join(', ')} (default human)`,
          } satisfies OptionDefinition,
        }
      : {}),
    help: { type: 'boolean', short: 'h', description: 'Show this help' },
  };
}

function optionLabel(name: string, option: OptionDefinition): string {
  const value = option.type === 'string' ? ` ${option.value ?? '<value>'}` : '';
  return `${option.short ? `-${option.short}, ` : '    '}--${name}${value}`;
}

/** `slipway help <command>` and `<command> --help`: usage, every option described, examples. */
export function commandHelp(command: Command, all: Command[]): string {
  const usage = command.usage.split('\n');
  let out = `${wrapUsage(`Usage: slipway ${usage[0]}`, HELP_WIDTH).join('\n')}\n${usage
    .slice(1)
    .map((l) => `${l}\n`)
    .join('')}`;
  out += `\n${wrap(sentence(command.summary), HELP_WIDTH).join('\n')}\n`;
  if (command.arguments?.length) {
    out += '\nArguments:\n' + table(command.arguments.map((a) => [a.name, a.description]));
  }
  const options = { ...command.options, ...commonOptions(command) };
  out +=
    '\nOptions:\n' +
    table(
      Object.entries(options).map(([name, o]) => [optionLabel(name, o), o.description]),
      2,
      32,
    );
  const subs = subCommands(all, command.path);
  if (subs.length) out += '\nCommands:\n' + table(subs.map((c) => [commandName(c), c.summary]));
  out += '\nExamples:\n' + command.examples.map((e) => `  ${e}\n`).join('');
  return out;
}

/** `slipway <topic>` alone: its commands. */
export function topicHelp(topic: string, all: Command[]): string {
  const members = all.filter((c) => c.path[0] === topic);
  return (
    `slipway ${topic}: ${topicSummary(topic)}\n\nCommands:\n` +
    table(members.map((c) => [commandName(c), c.summary])) +
    `\nRun \`slipway help ${topic} <command>\` for its options and examples.\n`
  );
}

/** `slipway help`: every command with what it does, within HELP_WIDTH columns. */
export function globalHelp(all: Command[]): string {
  return (
    'Usage: slipway <command> [options]\n\nCommands:\n' +
    table(
      all.map((c) => [commandName(c), c.summary]),
      2,
      24,
    ) +
    '\nCommands that print data accept --format json. Commands about one application take\n' +
    '--app <id|name|alias> or --alias/-a <alias> (default: the application linked to the folder).\n' +
    'Run `slipway help <command>` or `slipway <command> --help` for its options and examples.\n' +
    'Other: slipway --version, slipway completion bash|zsh.\n'
  );
}

function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/** Edit distance between two words (insertions, deletions, substitutions, transpositions). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The command nearest to what was typed: a small edit distance over the same number of
 * words, or a unique command that starts with the typed word.
 */
export function nearestCommand(words: string[], all: Command[]): string | undefined {
  const names = [...new Set(all.flatMap((c) => [c.path, ...(c.aliases ?? [])]).map((p) => p.join(' ')))];
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const typed = words.slice(0, name.split(' ').length).join(' ');
    const distance = editDistance(typed, name);
    if (distance <= Math.max(1, Math.floor(name.length / 3)) && (!best || distance < best.distance)) best = { name, distance };
  }
  if (best) return best.name;
  const prefixed = names.filter((n) => words[0] && words[0].length >= 2 && n.startsWith(words[0]) && !n.includes(' '));
  return prefixed.length === 1 ? prefixed[0] : undefined;
}
