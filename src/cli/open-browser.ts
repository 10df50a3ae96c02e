import { spawn } from 'node:child_process';
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
  const outcome = await new Promise<string | undefined>((resolve) => {
    const child = spawn('xdg-open', [url], { env: ctx.env, stdio: 'ignore', detached: true });
    // A browser that stays attached to xdg-open must not keep the command waiting.
    const timer = setTimeout(() => {
      child.unref();
      resolve(undefined);
    }, 5000);
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve((error as NodeJS.ErrnoException).code === 'ENOENT' ? 'xdg-open is not installed' : error.message);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code === 0 ? undefined : `xdg-open exited with ${code} (no browser configured?)`);
    });
  });
  if (outcome) ctx.err(`Could not open a browser: ${outcome}. Open the URL above yourself.\n`);
}
