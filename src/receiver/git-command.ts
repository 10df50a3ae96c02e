/**
 * The only commands the git SSH endpoint runs, parsed from the client's exec request.
 *
 * Stock git sends `git-receive-pack '/<path>'` for ssh:// URLs and `git-receive-pack '<path>'`
 * for scp-like ones; older tools send `git receive-pack`. Anything that is not exactly one of
 * these shapes, with a path that is exactly `<app_id>.git`, is refused before any process or
 * file path is built from it.
 */
import { isAppId } from '../core/names.js';

export type GitService = 'receive-pack' | 'upload-pack';

export type ParsedGitCommand = { ok: true; service: GitService; appId: string } | { ok: false; reason: string };

const COMMAND_SHAPE = /^git[- ](receive-pack|upload-pack) +(?:'([^']*)'|([^\s'"]+))$/;
const REPO_PATH_SHAPE = /^\/?([^/]+)\.git$/;

export const USAGE_HINT =
  'This endpoint only serves git: use it as a git remote, e.g. ' +
  '`git remote add slipway git+ssh://git@<host>:<port>/<app_id>.git` then `git push slipway master`.';

export function parseGitCommand(command: string): ParsedGitCommand {
  const shape = COMMAND_SHAPE.exec(command);
  if (!shape) {
    return {
      ok: false,
      reason: `Command refused: only git push and git fetch are served here. ${USAGE_HINT}`,
    };
  }
  const service = shape[1] as GitService;
  const path = shape[2] ?? shape[3] ?? '';
  const repo = REPO_PATH_SHAPE.exec(path);
  if (!repo || !isAppId(repo[1]!)) {
    return {
      ok: false,
      reason:
        'Repository path refused: it must be `<app_id>.git` where the app id looks like ' +
        "`app_<uuid>`. Use the app's git URL (`git_ssh_url` in .slipway.json, or `slipway applications`) as your remote.",
    };
  }
  return { ok: true, service, appId: repo[1]! };
}

/** argv (no shell) for the git process serving one request against one bare repository. */
export function gitServiceArgv(service: GitService, repoPath: string, maxInputBytes?: number): string[] {
  // receive.maxInputSize makes index-pack stop reading a pack past that size: a push is
  // refused while it arrives, before it fills the disk (git writes the pack before any hook).
  const limit =
    maxInputBytes !== undefined && service === 'receive-pack'
      ? ['-c', `receive.maxInputSize=${Math.max(1, Math.floor(maxInputBytes))}`]
      : [];
  return ['git', ...limit, service, repoPath];
}

/** What git prints when receive.maxInputSize stopped a push. */
export const PACK_TOO_LARGE = 'pack exceeds maximum allowed size';

/**
 * Git protocol v2 is negotiated through the GIT_PROTOCOL environment variable, which the stock
 * ssh client forwards with SendEnv. Only well-formed values are passed on to git.
 */
export function acceptableGitProtocol(value: string): boolean {
  return /^[a-z0-9=:.-]{1,64}$/i.test(value);
}
