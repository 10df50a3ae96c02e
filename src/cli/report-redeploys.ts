import type { CommandContext } from './command.js';

export interface Redeployed {
  app_id: string;
  app_name: string;
  deployment_id: string;
}

/** Tells which linked applications restart to pick the change up. */
export function reportRedeploys(ctx: CommandContext, redeployed: Redeployed[]): void {
  for (const r of redeployed)
    ctx.err(`Restarting ${r.app_name} (${r.app_id}), linked to this application: deployment ${r.deployment_id}.\n`);
}
