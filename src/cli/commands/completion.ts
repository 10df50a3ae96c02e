import { command } from '../command.js';
import { bashCompletion, COMPLETION_SHELLS, zshCompletion } from '../completion.js';
import { UsageError } from '../errors.js';
import { commands } from './index.js';

export const completion = command({
  path: ['completion'],
  summary: 'Print the shell completion script for bash or zsh (commands, options and their values)',
  usage: 'completion bash|zsh',
  args: { min: 1, max: 1 },
  arguments: [{ name: '<shell>', description: 'bash or zsh', choices: COMPLETION_SHELLS }],
  examples: ['source <(slipway completion bash)', 'slipway completion zsh > "${fpath[1]}/_slipway"'],
  async run(ctx, [shell]) {
    if (shell === 'bash') ctx.out(bashCompletion(commands));
    else if (shell === 'zsh') ctx.out(zshCompletion(commands));
    else throw new UsageError(`No completion for ${JSON.stringify(shell)}: slipway completes ${COMPLETION_SHELLS.join(' and ')}.`);
  },
});
