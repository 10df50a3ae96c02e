import { createInterface } from 'node:readline';
import type { CommandContext } from './command.js';
import { CliError } from './errors.js';

/**
 * Asks the user to type `expected` to go on. Without a terminal on stdin nobody can answer,
 * so the command refuses instead of guessing, and says which flag confirms up front.
 */
export async function confirmByTyping(ctx: CommandContext, question: string, expected: string, flag: string): Promise<void> {
  if (!(ctx.stdin as NodeJS.ReadStream).isTTY) {
    throw new CliError(`${question} No terminal to confirm on.`, `Pass ${flag} to confirm without a prompt.`);
  }
  const rl = createInterface({ input: ctx.stdin, output: process.stderr });
  try {
    const answer = await new Promise<string>((resolve) =>
      rl.question(`${question}\nType ${JSON.stringify(expected)} to confirm: `, resolve),
    );
    if (answer.trim() !== expected) throw new CliError('Not confirmed; nothing was changed.');
  } finally {
    rl.close();
  }
}
