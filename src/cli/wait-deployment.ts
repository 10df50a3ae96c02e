import type { CommandContext } from './command.js';
import { followLog } from './follow-log.js';

/** Follows a deployment's log to its end; exit code 0 only when it ended OK. */
export async function waitForDeployment(
  ctx: CommandContext,
  appId: string,
  deploymentId: string,
  quiet: boolean,
): Promise<{ code: number; state: string }> {
  const end = await followLog(ctx, `/v1/apps/${appId}/deployments/${deploymentId}/logs`, {
    follow: true,
    print: (entry) => {
      if (quiet) return;
      if (ctx.format === 'json') ctx.out(JSON.stringify(entry) + '\n');
      else ctx.err(`${entry.line}\n`);
    },
  });
  const state = end.state ?? 'UNKNOWN';
  return { code: state === 'OK' ? 0 : 1, state };
}
