import { parseArgs } from 'node:util';
import type { Command, CommandContext, OptionValues } from './command.js';
import { commands } from './commands/index.js';
import { CliError, UsageError } from './errors.js';
import { loadConfig } from './config.js';
import { ApiClient } from './api-client.js';
import { commandHelp, commonOptions, globalHelp, nearestCommand, subCommands, topicHelp, topics } from './help.js';
import { slipwayVersion } from './version.js';
import { endQuietlyWhenReaderCloses } from './closed-output.js';
import { separateDashValues } from './dash-values.js';

const EXIT_OK = 0;
const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;

/** The longest command path (or alias) that prefixes argv's leading words (`env set` before `env`). */
function findCommand(argv: string[], available: Command[]): { command: Command; rest: string[] } | undefined {
  const words: string[] = [];
  for (const arg of argv) {
    if (arg.startsWith('-')) break;
    words.push(arg);
  }
  const paths = available.flatMap((command) => [command.path, ...(command.aliases ?? [])].map((path) => ({ command, path })));
  paths.sort((a, b) => b.path.length - a.path.length);
  for (const { command, path } of paths) {
    if (path.every((w, i) => words[i] === w)) {
      const rest = [...argv];
      for (const word of path) rest.splice(rest.indexOf(word), 1);
      return { command, rest };
    }
  }
  return undefined;
}

/** What `help <words>` or an unknown command should print, and with which exit code. */
function helpFor(words: string[], out: (t: string) => void, err: (t: string) => void): number {
  if (words.length === 0) {
    out(globalHelp(commands));
    return EXIT_OK;
  }
  const exact = commands.find((c) => [c.path, ...(c.aliases ?? [])].some((p) => p.join(' ') === words.join(' ')));
  if (exact) {
    out(commandHelp(exact, commands));
    return EXIT_OK;
  }
  if (words.length === 1 && topics(commands).includes(words[0]!)) {
    out(topicHelp(words[0]!, commands));
    return EXIT_OK;
  }
  return unknownCommand(words, err);
}

function unknownCommand(words: string[], err: (t: string) => void): number {
  const typed = words.slice(0, 2).join(' ');
  const nearest = nearestCommand(words, commands);
  const topic = topics(commands).includes(words[0]!) ? words[0] : undefined;
  err(
    `Unknown command: slipway ${typed}
` +
      (nearest ? `Did you mean \`slipway ${nearest}\`?\n` : '') +
      (topic ? `\n${topicHelp(topic, commands)}` : '\nRun `slipway help` to list the commands.\n'),
  );
  return EXIT_USAGE;
}

/**
 * Node's parser quotes the offending argument whole; when a value such as a private key is
 * mistaken for an option that would print a secret, so only option-shaped words are repeated.
 */
function describeUsageError(error: Error): string {
  if ((error as { code?: string }).code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return error.message;
  const option = /^Unknown option '([^']*)'/.exec(error.message)?.[1] ?? '';
  if (/^--[A-Za-z0-9][A-Za-z0-9-]{0,40}$/.test(option)) return `Unknown option '${option}'.`;
  if (/^-[A-Za-z0-9]$/.test(option)) {
    return `Unknown option '${option}'. If it begins a value rather than an option, put -- before the value: words after -- are never read as options.`;
  }
  return "An argument that starts with '-' was read as an option. Put -- before values that start with '-' (e.g. slipway env set NAME -- \"$VALUE\").";
}

export async function main(
  argv: string[],
  io: Partial<Pick<CommandContext, 'out' | 'err' | 'cwd' | 'env' | 'stdin'>> = {},
): Promise<number> {
  // The daemon (`server`) is left out: losing its log reader must not look like a clean stop.
  if (argv[0] !== 'server') {
    if (!io.out) endQuietlyWhenReaderCloses(process.stdout);
    if (!io.err) endQuietlyWhenReaderCloses(process.stderr);
  }
  const out = io.out ?? ((t: string) => void process.stdout.write(t));
  const err = io.err ?? ((t: string) => void process.stderr.write(t));
  if (argv.length === 0) {
    err(globalHelp(commands));
    return EXIT_USAGE;
  }
  if (argv[0] === '--help' || argv[0] === '-h') return helpFor([], out, err);
  if (argv[0] === 'help')
    return helpFor(
      argv.slice(1).filter((a) => !a.startsWith('-')),
      out,
      err,
    );
  if (argv[0] === '--version' || argv[0] === '-v' || (argv[0] === 'version' && argv.length === 1)) {
    out(`slipway ${slipwayVersion()}\n`);
    return EXIT_OK;
  }
  const found = findCommand(argv, commands);
  if (!found) {
    const words = argv.filter((a) => !a.startsWith('-'));
    // A topic alone (`slipway addon`) lists its commands.
    if (words.length === 1 && topics(commands).includes(words[0]!)) {
      out(topicHelp(words[0]!, commands));
      return EXIT_OK;
    }
    return unknownCommand(words, err);
  }
  const { command, rest } = found;
  try {
    const options = { ...command.options, ...commonOptions(command) };
    const { values, positionals } = parseArgs({
      args: command.valuesMayStartWithDash ? separateDashValues(rest, options) : rest,
      options: Object.fromEntries(
        Object.entries(options).map(([name, o]) => [
          name,
          { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) },
        ]),
      ),
      allowPositionals: true,
      strict: true,
    });
    if (values.help) {
      out(commandHelp(command, commands));
      return EXIT_OK;
    }
    const formats = command.formats ?? (command.printsData ? ['human', 'json'] : []);
    const format = (values.format as string | undefined) ?? 'human';
    if (formats.length && !formats.includes(format as never)) {
      throw new UsageError(`Unknown --format ${JSON.stringify(format)}; use one of ${formats.join(', ')}.`);
    }
    if (positionals.length < command.args.min) {
      const missing = command.arguments?.slice(positionals.length, command.args.min).map((a) => a.name) ?? [];
      throw new UsageError(missing.length ? `Missing argument${missing.length > 1 ? 's' : ''} ${missing.join(' ')}.` : 'Missing argument.');
    }
    if (positionals.length > command.args.max) {
      const sub = positionals.length > 0 && nearestCommand([...command.path, ...positionals], subCommands(commands, command.path));
      throw new UsageError(
        `Unexpected argument ${JSON.stringify(positionals[command.args.max])}.${sub ? ` Did you mean \`slipway ${sub}\`?` : ''}`,
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
    // parseArgs has read each option as its declaration says (text, flag, repeated text): the one
    // place the values meet their declarations, so each command's `run` reads them typed.
    const code = await command.run(ctx, positionals, values as OptionValues);
    return typeof code === 'number' ? code : EXIT_OK;
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      err(
        `Error: ${describeUsageError(error as Error)}\nUsage: slipway ${command.usage.split('\n')[0]}\nRun \`slipway help ${command.path.join(' ')}\` for its options and examples.\n`,
      );
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
