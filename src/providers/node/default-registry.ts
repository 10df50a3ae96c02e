/**
 * The registry npm installs from by default, read from npm's own configuration at plan time
 * (never written into slipway): credentials without CC_NPM_REGISTRY are scoped to it.
 */
import { runChecked } from '../../executor/run-captured.js';
import { PlanError } from '../plan.js';

/** `npm config get registry` with the machine's npm configuration. */
export async function npmConfiguredRegistry(): Promise<string> {
  try {
    const { stdout } = await runChecked(['npm', 'config', 'get', 'registry'], {
      timeoutMs: 30_000,
      env: { ...process.env, npm_config_update_notifier: 'false' },
    });
    const value = stdout.trim();
    if (value === '' || value === 'undefined') throw new Error('npm printed no registry');
    return value;
  } catch (error) {
    throw new PlanError(
      `Cannot read the default npm registry from npm's configuration (\`npm config get registry\` failed: ${(error as Error).message.split('\n')[0]}).`,
      'Set CC_NPM_REGISTRY to the host the credentials are for, or fix npm on the slipway machine.',
    );
  }
}
