import { command } from '../command.js';
import { APP_OPTIONS, resolveAppOption } from '../app-options.js';
import { FRAME, FrameDecoder, type RunExit } from '../../shared/run-frames.js';
import { CliError } from '../errors.js';

export const run = command({
  path: ['run'],
  summary:
    "Run a one-off command in a fresh sandbox of the app's current release (migrations, consoles, scripts); its exit code is the command's",
  usage: 'run [--app <app>] -- <command> [args...]',
  options: { ...APP_OPTIONS },
  args: { min: 1, max: 1000 },
  arguments: [
    { name: '<command> [args...]', description: 'The program to run and its arguments (after --, so its own options stay its own)' },
  ],
  examples: ['slipway run -- npm run migrate', 'slipway run --app shop -- node -e "console.log(process.env.PORT)"'],
  async run(ctx, argv, options) {
    const app = await resolveAppOption(ctx, options);
    const socket = await ctx.client().upgrade(`/v1/apps/${app.id}/run?command=${encodeURIComponent(JSON.stringify(argv))}`, 'slipway-run');
    let exit: (RunExit & { description?: string }) | undefined;
    const decoder = new FrameDecoder((type, payload) => {
      if (type === FRAME.stdout) process.stdout.write(payload);
      else if (type === FRAME.stderr) process.stderr.write(payload);
      else if (type === FRAME.exit) exit = JSON.parse(payload.toString()) as RunExit;
    });
    socket.on('data', (chunk: Buffer) => decoder.push(chunk));
    // Standard input goes to the command; its end is the command's end of input.
    ctx.stdin.on('data', (chunk: Buffer) => socket.write(chunk));
    ctx.stdin.once('end', () => socket.end());
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    ctx.stdin.removeAllListeners('data');
    (ctx.stdin as NodeJS.ReadStream).pause?.();
    if (!exit) throw new CliError('The connection to the daemon ended before the command did.');
    if (exit.code === null) {
      ctx.err(`The command ${exit.description ?? `was killed by ${exit.signal}`}.\n`);
      return exit.signal === 'SIGKILL' ? 137 : 1;
    }
    return exit.code;
  },
});
