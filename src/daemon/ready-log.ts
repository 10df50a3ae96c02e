import type { DaemonOptions } from './options.js';

/** The lines a daemon prints once it serves: where the API, console, HTTPS, git and router are, and how to log in. */
export function logReady(
  log: (line: string) => void,
  options: DaemonOptions,
  ready: { apiUrl: string; sshPort: number; caCertificatePath: string; first: { created: boolean; tokenFile: string } },
): void {
  const { apiUrl, sshPort, first } = ready;
  log(`slipway API listening on ${apiUrl} (data folder ${options.dataDir})`);
  log(`Web console on ${apiUrl}/ (sign in with an API token)`);
  if (options.httpsPort > 0) {
    log(
      `HTTPS on ${options.listen}:${options.httpsPort}; the internal CA's certificate is ${ready.caCertificatePath} (clients trust it for <app_id>.${options.domain} and names without ACME)`,
    );
  }
  log(
    `git over SSH on port ${sshPort}; router on ${options.listen}:${options.routerPort} for *.${options.domain}; instances on ${options.subnet}`,
  );
  // The token itself is never printed: the daemon's output goes to the journal, which keeps it
  // for anyone allowed to read logs. The file is root's alone (0600).
  if (first.created) {
    log(`First start: created user "admin", organisation "default" and an API token.`);
    log(`admin token written to ${first.tokenFile} (mode 0600); read it with: sudo cat ${first.tokenFile}`);
  }
  log(`Log in with: slipway login --url ${apiUrl} --token "$(sudo cat ${first.tokenFile})"`);
  log('slipway is ready.');
}
