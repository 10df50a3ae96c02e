import type { CommandContext, OptionValues } from '../cli/command.js';
import { CliError, UsageError } from '../cli/errors.js';
import { checkedRegistry } from '../instances/swarm/start.js';
import { Daemon, type StopScope } from './daemon.js';
import { parseDaemonFlags } from './flags.js';
import type { DaemonOptions } from './options.js';

/**
 * `slipway server`: the daemon in the foreground, from its flags to its stop. A wrong flag is a
 * usage error (exit code 2); a start that fails stops what was started and says why (exit code 1);
 * SIGTERM or SIGINT stops the daemon alone, `slipway system stop` the data plane too.
 */
export async function serve(ctx: CommandContext, flags: OptionValues): Promise<void> {
  let options: DaemonOptions;
  try {
    options = parseDaemonFlags(flags, ctx.env);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  // A registry the daemon could not push to is said now, before anything of the data plane
  // is touched: the apps the swarm runs keep serving while the operator fixes the credential.
  if (options.backend === 'swarm' && options.swarm) {
    try {
      await checkedRegistry(options.swarm);
    } catch (error) {
      throw new CliError(`slipway could not start. ${(error as Error).message}`);
    }
  }
  const daemon = new Daemon(options, (line) => ctx.err(`${line}\n`));
  try {
    await daemon.start();
  } catch (error) {
    await daemon.stop();
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new CliError(
        `slipway could not start: ${(error as Error).message} (another program uses that port).`,
        'Choose other ports with --api-port/--ssh-port/--router-port/--https-port, or stop the other program.',
      );
    }
    throw new CliError(`slipway could not start. ${(error as Error).message}`);
  }
  const scope = await new Promise<StopScope>((resolve) => {
    const onSignal = (signal: string) => {
      ctx.err(`Received ${signal}: stopping the daemon; the router, the apps and the add-on servers go on serving.\n`);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve('control');
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    void daemon.systemStopped.then(() => resolve('all'));
  });
  await daemon.stop(scope);
  ctx.err(
    scope === 'all' ? 'slipway stopped, with every app, add-on server and the router.\n' : 'slipway stopped; its apps go on serving.\n',
  );
  // Nothing of the data plane may keep the process: what outlives it was let go of.
  process.exit(0);
}
