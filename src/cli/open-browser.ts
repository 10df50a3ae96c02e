import { launchDetached } from '../executor/launch-detached.js';
import type { CommandContext } from './command.js';

/** A graphical session someone could see a browser in (xdg-open needs one to do anything useful). */
export function hasDisplay(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
}

/**
 * Asks the desktop to open a URL with xdg-open. The URL was printed before, so this only helps:
 * with no display, no xdg-open or no browser, the command still succeeds and says so.
 */
export async function openInBrowser(ctx: CommandContext, url: string): Promise<void> {
  if (!hasDisplay(ctx.env)) {
    ctx.err('No display here (DISPLAY and WAYLAND_DISPLAY are unset): open the URL above in a browser.\n');
    return;
  }
  const env = Object.fromEntries(Object.entries(ctx.env).filter((e): e is [string, string] => e[1] !== undefined));
  // A browser that stays attached to xdg-open must not keep the command waiting: 5 s, then it is left running.
  const outcome = await launchDetached({ argv: ['xdg-open', url], cwd: '/', env, settleMs: 5000 }).then(
    (launched) =>
      launched.state === 'running' || launched.exitCode === 0
        ? undefined
        : `xdg-open ${launched.signal ? `was killed by ${launched.signal}` : `exited with ${launched.exitCode}`} (no browser configured?)`,
    (error: Error) => (/ENOENT/.test(error.message) ? 'xdg-open is not installed' : error.message),
  );
  if (outcome) ctx.err(`Could not open a browser: ${outcome}. Open the URL above yourself.\n`);
}
