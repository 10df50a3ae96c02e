import type { Command } from '../command.js';
import { Daemon } from '../../daemon/daemon.js';
import { resolveDataDir } from '../../daemon/data-dir.js';
import { parseUidRange } from '../../sandbox/app-users.js';
import { LOG_LIMIT_FLAGS, parseLogLimits, type LogLimitFlag } from '../../logs/log-limits.js';
import { checkDomain, DEFAULT_API_PORT, DEFAULT_DOMAIN, DEFAULT_ROUTER_PORT, DEFAULT_SSH_PORT, DEFAULT_SUBNET, networkNames, parsePort } from '../../daemon/options.js';
import { join } from 'node:path';
import { UsageError, CliError } from '../errors.js';

export const server: Command = {
  path: ['server'],
  summary: 'Run the slipway daemon in the foreground',
  usage: 'server [--data-dir <dir>] [--listen <addr>] [--api-port 4040] [--ssh-port 2222] [--router-port 8000] [--domain localhost] [--public-host <host>] [--subnet 10.77.0.0/16] [--toolchain-cache <dir>] [--app-uids 2000000-2099999] [--kept-releases 5] [--log-max-size 10M] [--log-files 3] [--deploy-log-max-size 2M] [--deploy-log-files 1] [--deploy-logs-kept 20]',
  options: {
    'data-dir': { type: 'string' },
    listen: { type: 'string' },
    'api-port': { type: 'string' },
    'ssh-port': { type: 'string' },
    'router-port': { type: 'string' },
    domain: { type: 'string' },
    'public-host': { type: 'string' },
    subnet: { type: 'string' },
    'toolchain-cache': { type: 'string' },
    'app-uids': { type: 'string' },
    'kept-releases': { type: 'string' },
    ...Object.fromEntries(Object.keys(LOG_LIMIT_FLAGS).map((flag) => [flag, { type: 'string' as const }])),
  },
  args: { min: 0, max: 0 },
  async run(ctx, _args, o) {
    let options;
    try {
      const domain = checkDomain((o.domain as string | undefined) ?? DEFAULT_DOMAIN);
      const dataDir = resolveDataDir(o['data-dir'] as string | undefined, ctx.env);
      const subnet = (o.subnet as string | undefined) ?? DEFAULT_SUBNET;
      networkNames(subnet);
      options = {
        dataDir,
        subnet,
        toolchainCacheDir: (o['toolchain-cache'] as string | undefined) ?? ctx.env.SLIPWAY_TOOLCHAIN_CACHE ?? join(dataDir, 'cache', 'toolchains'),
        listen: (o.listen as string | undefined) ?? '127.0.0.1',
        apiPort: parsePort('--api-port', o['api-port'] as string | undefined, DEFAULT_API_PORT),
        sshPort: parsePort('--ssh-port', o['ssh-port'] as string | undefined, DEFAULT_SSH_PORT),
        routerPort: parsePort('--router-port', o['router-port'] as string | undefined, DEFAULT_ROUTER_PORT),
        domain,
        publicHost: (o['public-host'] as string | undefined) ?? domain,
        keptReleases: parseKeptReleases((o['kept-releases'] as string | undefined) ?? ctx.env.SLIPWAY_KEPT_RELEASES),
        appUids: parseUidRange((o['app-uids'] as string | undefined) ?? ctx.env.SLIPWAY_APP_UIDS) && ((o['app-uids'] as string | undefined) ?? ctx.env.SLIPWAY_APP_UIDS),
        logLimits: parseLogLimits(o as Partial<Record<LogLimitFlag, string>>, ctx.env),
      };
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    const daemon = new Daemon(options, (line) => ctx.err(`${line}\n`));
    try {
      await daemon.start();
    } catch (error) {
      await daemon.stop();
      if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
        throw new CliError(
          `slipway could not start: ${(error as Error).message} (another program uses that port).`,
          'Choose other ports with --api-port/--ssh-port/--router-port, or stop the other program.',
        );
      }
      throw new CliError(`slipway could not start. ${(error as Error).message}`);
    }
    await new Promise<void>((resolve) => {
      const onSignal = (signal: string) => {
        ctx.err(`Received ${signal}: stopping.\n`);
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        resolve();
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
    });
    await daemon.stop();
    ctx.err('slipway stopped.\n');
  },
};

/** Releases kept per app for rollbacks: at least 1 (the serving one). */
function parseKeptReleases(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new Error(`--kept-releases must be a whole number from 1 to 100, not ${JSON.stringify(value)}.`);
  return n;
}
