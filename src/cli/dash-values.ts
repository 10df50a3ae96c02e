import type { OptionSpec } from './command.js';

/**
 * Moves a command's positional values that start with `-` behind `--`, so the option parser takes
 * them as values: `slipway env set JAVA_OPTS -Dplay.http.secret.key=… --app shop` sets the JVM
 * options instead of failing on an unknown `-D`. Only words that are none of the command's own
 * options move; the command's options keep working anywhere on the line, and an explicit `--`
 * still ends the options as usual.
 */
export function separateDashValues(args: string[], options: OptionSpec): string[] {
  const named = new Map<string, OptionSpec[string]>();
  for (const [name, spec] of Object.entries(options)) {
    named.set(`--${name}`, spec);
    if (spec.short) named.set(`-${spec.short}`, spec);
  }
  const optionWords: string[] = [];
  const values: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const word = args[i]!;
    if (word === '--') {
      values.push(...args.slice(i + 1));
      break;
    }
    const bare = word.includes('=') && word.startsWith('--') ? word.slice(0, word.indexOf('=')) : word;
    const spec = named.get(bare);
    if (!spec) {
      values.push(word);
      continue;
    }
    optionWords.push(word);
    // A string option's value is the next word, unless it was given with `=`.
    if (spec.type === 'string' && bare === word && i + 1 < args.length) optionWords.push(args[++i]!);
  }
  return values.length > 0 ? [...optionWords, '--', ...values] : optionWords;
}
