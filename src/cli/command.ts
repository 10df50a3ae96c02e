import type { ApiClient } from './api-client.js';

/** One option of a command: how it parses, and what `--help` says about it. */
export interface OptionDefinition {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  /** What the option does; every option has one, shown by `--help`. */
  description: string;
  /** Placeholder of a string option's value in help (`<app>`); `<value>` when absent. */
  value?: string;
  /** The only values accepted, offered by shell completion. */
  choices?: readonly string[];
}

export type OptionSpec = Record<string, OptionDefinition>;
export type OptionValues = Record<string, string | boolean | string[] | undefined>;

/** What an option's declaration makes of it: a flag, every value of a repeated option, or text. */
type OptionValue<D extends OptionDefinition> = D['type'] extends 'boolean' ? boolean : D['multiple'] extends true ? string[] : string;

/** The options `run` receives, typed from their declarations; an option not given is absent. */
export type OptionValuesOf<O extends OptionSpec> = { [K in keyof O]?: OptionValue<O[K]> };

/** A positional argument, named in help and in "missing argument" errors. */
export interface ArgumentDefinition {
  /** As written in the usage line: `<app-name>`. */
  name: string;
  description: string;
  /** The only values accepted, offered by shell completion. */
  choices?: readonly string[];
}

export interface CommandContext {
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdin: NodeJS.ReadableStream;
  /** Data goes to stdout. */
  out(text: string): void;
  /** Progress and errors go to stderr. */
  err(text: string): void;
  format: 'human' | 'json' | 'shell';
  client(): ApiClient;
}

export interface Command {
  /** Words typed to reach it: ['env', 'set']. */
  path: string[];
  /** Other words that reach it (`profile` for `whoami`). */
  aliases?: string[][];
  summary: string;
  /** Usage line after `slipway`. */
  usage: string;
  options?: OptionSpec;
  /** Number of positional arguments accepted. */
  args: { min: number; max: number };
  /**
   * Its positional arguments are values that may start with `-` (JVM options, flags for the
   * app): words that are none of its options are taken as values without `--` (dash-values.ts).
   */
  valuesMayStartWithDash?: boolean;
  /** The positional arguments in order (required when the command takes any). */
  arguments?: ArgumentDefinition[];
  /** Complete command lines shown by `--help`; at least one. */
  examples: string[];
  /** Whether the command prints data and so accepts --format json. */
  printsData?: boolean;
  /** Output formats accepted by --format; default human and json for data commands. */
  formats?: Array<'human' | 'json' | 'shell'>;
  // biome-ignore lint/suspicious/noConfusingVoidType: a command that returns nothing ended well (exit code 0).
  run(ctx: CommandContext, args: string[], options: OptionValues): Promise<number | void>;
}

/** The first `min` positional arguments, which main() has checked are there; any further ones may be absent. */
type Positionals<Min extends number> = Min extends 1
  ? [string, ...string[]]
  : Min extends 2
    ? [string, string, ...string[]]
    : Min extends 3
      ? [string, string, string, ...string[]]
      : string[];

/** A command as its file declares it: `run` receives its arguments and options typed from their declarations. */
export interface CommandDeclaration<O extends OptionSpec, Min extends number> extends Omit<Command, 'options' | 'args' | 'run'> {
  options?: O;
  args: { min: Min; max: number };
  // biome-ignore lint/suspicious/noConfusingVoidType: a command that returns nothing ended well (exit code 0).
  run(ctx: CommandContext, args: Positionals<Min>, options: OptionValuesOf<O>): Promise<number | void>;
}

/**
 * Declares a command. Before `run` is called, main() has checked the count of positional
 * arguments against `args` and node's parseArgs each option's kind against `options` (text,
 * flag, repeated), so `run` reads them as typed, without casts or "!".
 */
export function command<const O extends OptionSpec = Record<never, OptionDefinition>, const Min extends number = number>(
  declaration: CommandDeclaration<O, Min>,
): Command {
  return declaration;
}
