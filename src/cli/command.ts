import type { ParseArgsConfig } from 'node:util';
import type { ApiClient } from './api-client.js';

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;
export type OptionValues = Record<string, string | boolean | string[] | undefined>;

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
  summary: string;
  /** Usage line after `slipway`. */
  usage: string;
  options?: OptionSpec;
  /** Number of positional arguments accepted. */
  args: { min: number; max: number };
  /** Whether the command prints data and so accepts --format json. */
  printsData?: boolean;
  /** Output formats accepted by --format; default human and json for data commands. */
  formats?: Array<'human' | 'json' | 'shell'>;
  run(ctx: CommandContext, args: string[], options: OptionValues): Promise<number | void>;
}
