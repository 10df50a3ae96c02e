import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { command } from '../../command.js';
import { CliError } from '../../errors.js';
import { printObject } from '../../output.js';

export const sshKeysAdd = command({
  path: ['ssh-keys', 'add'],
  summary: 'Register an SSH public key for git push',
  usage: 'ssh-keys add <public-key-file> [--label <label>]',
  options: { label: { type: 'string', value: '<label>', description: "A name for the key (default: the key's comment)" } },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<public-key-file>', description: 'The .pub file of the key (never the private key)' }],
  examples: ['slipway ssh-keys add ~/.ssh/id_ed25519.pub', 'slipway ssh-keys add laptop.pub --label laptop'],
  printsData: true,
  async run(ctx, [file], options) {
    let text: string;
    try {
      text = readFileSync(resolve(ctx.cwd, file), 'utf8');
    } catch (error) {
      throw new CliError(`Cannot read ${file}: ${(error as Error).message}.`, 'Give the path of a public key, e.g. ~/.ssh/id_ed25519.pub.');
    }
    const { key } = await ctx
      .client()
      .request<{ key: Record<string, unknown> }>('POST', '/v1/ssh-keys', { public_key: text, label: options.label });
    printObject(ctx, key);
  },
});
