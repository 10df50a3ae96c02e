import type { CommandContext } from './command.js';
import type { AddonSummary } from './addon-types.js';

/** An app's service dependencies as the API describes them. */
export interface Services {
  addons: AddonSummary[];
  apps: Array<{ id: string; name: string }>;
}

/** Prints the linked add-ons then the linked apps (or the JSON of both). */
export function printServices(ctx: CommandContext, services: Services): void {
  if (ctx.format === 'json') {
    ctx.out(JSON.stringify(services, null, 2) + '\n');
    return;
  }
  ctx.out('Add-ons:\n');
  if (services.addons.length === 0) ctx.out('  (none)\n');
  for (const a of services.addons) ctx.out(`  ${a.name}  ${a.provider}  ${a.id}\n`);
  ctx.out('Applications:\n');
  if (services.apps.length === 0) ctx.out('  (none)\n');
  for (const a of services.apps) ctx.out(`  ${a.name}  ${a.id}\n`);
}
