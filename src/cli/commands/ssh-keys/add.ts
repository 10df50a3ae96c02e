import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from '../../command.js';
import { CliError } from '../../errors.js';
import { printObject } from '../../output.js';

export const sshKeysAdd: Command = {
  path: ['ssh-keys', 'add'],
  summary: 'Register an SSH public key for git push',
  usage: 'ssh-keys add <public-key-file> [--label <label>]',
  options: { label: { type: 'string' } },
  args: { min: 1, max: 1 },
  printsData: true,
  async run(ctx, [file], options) {
    let text: string;
    try {
      text = readFileSync(resolve(ctx.cwd, file!), 'utf8');
    } catch (error) {
      throw new CliError(`Cannot read ${file}: ${(error as Error).message}.`, 'Give the path of a public key, e.g. ~/.ssh/id_ed25519.pub.');
    }
    const { key } = await ctx.client().request<{ key: Record<string, unknown> }>('POST', '/v1/ssh-keys', { public_key: text, label: options.label });
    printObject(ctx, key);
  },
};
