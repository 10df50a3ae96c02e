/**
 * Hooks installed in every app's bare repository. They are static text: nothing from a push is
 * ever spliced into them; ref names reach them only on stdin and are printed with printf '%s'.
 */
import { PLAN_REF } from '../core/plan-ref.js';

/** File name of the script the post-receive hook runs with the daemon's own node binary. */
export const PUSH_REPORT_SCRIPT = 'slipway-push-report.cjs';

/** Environment variables the receiver hands to `git receive-pack`, read by the hooks. */
export const PUSH_SOCKET_ENV = 'SLIPWAY_PUSH_SOCKET';
export const NODE_BINARY_ENV = 'SLIPWAY_NODE';

/**
 * pre-receive runs before any ref moves, so refusing here leaves the repository untouched and
 * deploys nothing. Only master deploys; deleting master would leave nothing to redeploy.
 */
export const PRE_RECEIVE_HOOK = `#!/bin/sh
# Installed by slipway: only refs/heads/master deploys, and master cannot be deleted;
# ${PLAN_REF} holds a commit sent to be planned, never deployed.
status=0
while read -r old new ref; do
  [ "$ref" = "${PLAN_REF}" ] && continue
  case "$new" in
    *[!0]*) deleting=no ;;
    *) deleting=yes ;;
  esac
  if [ "$ref" = "refs/heads/master" ]; then
    if [ "$deleting" = yes ]; then
      printf '%s\\n' "" \\
        "Push refused: master cannot be deleted, it holds what is deployed." \\
        "To deploy another commit, push it to master instead:" \\
        "    git push --force <remote> <commit>:master" ""
      status=1
    fi
    continue
  fi
  case "$ref" in
    refs/heads/*) name=\${ref#refs/heads/} ;;
    refs/tags/*) name=\${ref#refs/tags/} ;;
    *) name=$ref ;;
  esac
  if [ "$deleting" = yes ]; then
    printf '%s\\n' "" "Push refused: only the master branch exists here (you tried to delete $ref)." ""
  else
    printf '%s\\n' "" \\
      "Push refused: only the master branch deploys, and you pushed $ref." \\
      "To deploy it, push it to master:" \\
      "    git push <remote> $name:master" \\
      "(slipway deploy does this for the current HEAD.)" ""
  fi
  status=1
done
exit $status
`;

/**
 * post-receive runs after the refs moved, while the pusher is still connected: whatever it
 * prints reaches them as \`remote:\` lines. It hands the updates to the daemon, which queues the
 * deployment and answers with the lines to show. Outside a daemon-served push (e.g. an operator
 * pushing on the machine) it does nothing.
 */
export const POST_RECEIVE_HOOK = `#!/bin/sh
# Installed by slipway: reports this push to the daemon so it can queue a deployment.
[ -n "$${PUSH_SOCKET_ENV}" ] && [ -n "$${NODE_BINARY_ENV}" ] || exit 0
exec "$${NODE_BINARY_ENV}" "$(dirname "$0")/${PUSH_REPORT_SCRIPT}"
`;

export const PUSH_REPORT_CLIENT = `'use strict';
// Installed by slipway: sends the ref updates (post-receive stdin) to the daemon and relays
// its answer to stdout, which git shows to the pusher.
const net = require('node:net');
const socket = net.createConnection(process.env.${PUSH_SOCKET_ENV});
socket.on('connect', () => process.stdin.pipe(socket));
socket.pipe(process.stdout);
socket.on('error', (error) => {
  process.stderr.write('slipway: the push hook could not reach the daemon (' + error.message +
    '); the deployment is queued when the push ends.\\n');
  process.exitCode = 1;
});
`;
