import type { CommandContext } from './command.js';
import { followLog } from './follow-log.js';

/**
 * The line the deployer writes right after it recorded a deployment OK (src/pipeline/deployer.ts).
 * What follows it (CC_RUN_SUCCEEDED_HOOK, removing old releases) no longer changes the outcome.
 */
const SUCCEEDED_LINE = /^Successfully deployed in /;

/**
 * Follows a deployment's log until the deployment is OK or has ended; exit code 0 only when OK.
 * The log's stream closes once everything after the success is done too (the success hook, the
 * pruning of old releases), which may take long; so at the deployer's success line the
 * deployment's state is asked, and when the API says OK the wait ends there. The line alone
 * decides nothing: a build that prints the same words only costs one request.
 */
export async function waitForDeployment(
  ctx: CommandContext,
  appId: string,
  deploymentId: string,
  quiet: boolean,
): Promise<{ code: number; state: string }> {
  const stop = new AbortController();
  let okSeen = false;
  let asking = false;
  const askState = () => {
    asking = true;
    ctx
      .client()
      .request<{ deployment: { state: string } }>('GET', `/v1/apps/${appId}/deployments/${deploymentId}`)
      .then(
        ({ deployment }) => {
          if (deployment.state === 'OK') {
            okSeen = true;
            stop.abort();
          }
        },
        () => undefined, // the stream's own end still says how it ended
      )
      .finally(() => (asking = false));
  };
  const end = await followLog(ctx, `/v1/apps/${appId}/deployments/${deploymentId}/logs`, {
    follow: true,
    stop: stop.signal,
    print: (entry) => {
      if (!quiet) {
        if (ctx.format === 'json') ctx.out(JSON.stringify(entry) + '\n');
        else ctx.err(`${entry.line}\n`);
      }
      if (!okSeen && !asking && entry.stream === 'system' && SUCCEEDED_LINE.test(entry.line ?? '')) askState();
    },
  });
  const state = okSeen ? 'OK' : (end.state ?? 'UNKNOWN');
  return { code: state === 'OK' ? 0 : 1, state };
}
