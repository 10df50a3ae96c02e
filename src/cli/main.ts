import { parseArgs } from 'node:util';
import type { Command, CommandContext } from './command.js';
import { commands } from './commands/index.js';
import { CliError, UsageError } from './errors.js';
import { loadConfig } from './config.js';
import { ApiClient } from './api-client.js';

const EXIT_OK = 0;
const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;

/** The longest command path that prefixes argv's leading words (`env set` before `env`). */
function findCommand(argv: string[], available: Command[]): { command: Command; rest: string[] } | undefined {
  const words: string[] = [];
  for (const arg of argv) {
    if (arg.startsWith('-')) break;
    words.push(arg);
  }
  const sorted = [...available].sort((a, b) => b.path.length - a.path.length);
  for (const command of sorted) {
    if (command.path.every((w, i) => words[i] === w)) {
      const rest = [...argv];
      for (const word of command.path) rest.splice(rest.indexOf(word), 1);
      return { command, rest };
    }
  }
  return undefined;
}

export function helpText(): string {
  const width = Math.max(...commands.map((c) => c.usage.length));
  return (
    'Usage: slipway <command> [options]\n\nCommands:\n' +
    commands.map((c) => `  ${c.usage.padEnd(width)}  ${c.summary}`).join('\n') +
    '\n\nCommands that print data accept --format json. Every app command takes --app <id|name|alias>.\n'
  );
}

/**
 * Node's parser quotes the offending argument whole; when a value such as a private key is
 * mistaken for an option that would print a secret, so only option-shaped words are repeated.
 */
function describeUsageError(error: Error): string {
  if ((error as { code?: string }).code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return error.message;
  const option = /^Unknown option '([^']*)'/.exec(error.message)?.[1] ?? '';
  if (/^--?[A-Za-z0-9][A-Za-z0-9-]{0,40}$/.test(option)) return `Unknown option '${option}'.`;
  return "An argument that starts with '-' was read as an option. Put -- before values that start with '-' (e.g. slipway env set NAME -- \"$VALUE\").";
}

export async function main(argv: string[], io: Partial<Pick<CommandContext, 'out' | 'err' | 'cwd' | 'env' | 'stdin'>> = {}): Promise<number> {
  const out = io.out ?? ((t: string) => void process.stdout.write(t));
  const err = io.err ?? ((t: string) => void process.stderr.write(t));
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    (argv.length === 0 ? err : out)(helpText());
    return argv.length === 0 ? EXIT_USAGE : EXIT_OK;
  }
  const found = findCommand(argv, commands);
  if (!found) {
    err(`Unknown command: slipway ${argv.filter((a) => !a.startsWith('-')).slice(0, 2).join(' ')}\n\n${helpText()}`);
    return EXIT_USAGE;
  }
  const { command, rest } = found;
  try {
    const formats = command.formats ?? (command.printsData ? ['human', 'json'] : []);
    const { values, positionals } = parseArgs({
      args: rest,
      options: {
        ...command.options,
        help: { type: 'boolean', short: 'h' },
        ...(formats.length ? { format: { type: 'string', short: 'F' } } : {}),
      },
      allowPositionals: true,
      strict: true,
    });
    if (values.help) {
      out(`Usage: slipway ${command.usage}\n${command.summary}\n`);
      return EXIT_OK;
    }
    const format = (values.format as string | undefined) ?? 'human';
    if (formats.length && !formats.includes(format as never)) {
      throw new UsageError(`Unknown --format ${JSON.stringify(format)}; use one of ${formats.join(', ')}.`);
    }
    if (positionals.length < command.args.min || positionals.length > command.args.max) {
      throw new UsageError(
        positionals.length < command.args.min ? 'Missing argument.' : `Unexpected argument ${JSON.stringify(positionals[command.args.max])}.`,
      );
    }
    const env = io.env ?? process.env;
    let client: ApiClient | undefined;
    const ctx: CommandContext = {
      cwd: io.cwd ?? process.cwd(),
      env,
      stdin: io.stdin ?? process.stdin,
      out,
      err,
      format: format as CommandContext['format'],
      client: () => (client ??= new ApiClient(loadConfig(env))),
    };
    const code = await command.run(ctx, positionals, values as Record<string, string | boolean | undefined>);
    return typeof code === 'number' ? code : EXIT_OK;
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      err(`Error: ${describeUsageError(error as Error)}\nUsage: slipway ${command.usage}\n`);
      return EXIT_USAGE;
    }
    if (error instanceof CliError) {
      err(`Error: ${error.message}\n${error.hint ? `Hint: ${error.hint}\n` : ''}`);
      return EXIT_FAILURE;
    }
    err(`Error: ${(error as Error)?.stack ?? String(error)}\n`);
    return EXIT_FAILURE;
  }
}
