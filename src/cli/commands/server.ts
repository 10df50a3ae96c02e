import { command } from '../command.js';
import { DAEMON_FLAGS } from '../../daemon/flags.js';

/** The daemon in the foreground: its flags are declared, parsed and documented in src/daemon/flags.ts. */
export const server = command({
  path: ['server'],
  summary: 'Run the slipway daemon in the foreground',
  usage:
    'server [--data-dir <dir>] [--listen <addr>] [--api-port <port>] [--ssh-port <port>] [--router-port <port>] [--domain <domain>] [other options]',
  options: DAEMON_FLAGS,
  args: { min: 0, max: 0 },
  examples: [
    'sudo slipway server',
    'sudo slipway server --backend swarm --registry 127.0.0.1:5000',
    'sudo slipway server --data-dir /srv/slipway --listen 0.0.0.0 --domain apps.example.com --router-port 80',
  ],
  async run(ctx, _args, flags) {
    // Loaded here, not at the top: every other command would otherwise load the whole daemon
    // (some 300 modules) before doing anything, which a user pays on each command.
    const { serve } = await import('../../daemon/serve.js');
    await serve(ctx, flags);
  },
});
