import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ApiDependencies } from './platform.js';
import { authenticate } from './authenticate.js';
import { appForUser } from './access.js';
import { decodePathSegment } from './http-router.js';
import { SlipwayError } from '../core/errors.js';
import { encodeFrame, FRAME } from '../shared/run-frames.js';
import { parseOneOffCommand } from '../serving/one-off.js';
import { describeSandboxExit } from '../sandbox/describe.js';
import { requireScope } from './token-scope.js';
import { endWhenAccessEnds } from './access-watch.js';
import { serverRoutes } from './server-routes.js';
import { orgOfApp, quotasOf } from './quotas.js';

const RUN_PATH = /^\/v1\/apps\/([^/]+)\/run$/;

function refuse(socket: Duplex, error: unknown): void {
  const status = error instanceof SlipwayError ? error.status : 500;
  const body = JSON.stringify({
    error: {
      message: error instanceof SlipwayError ? error.message : 'Internal error.',
      hint: error instanceof SlipwayError ? error.hint : undefined,
    },
  });
  socket.end(
    `HTTP/1.1 ${status} Refused\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/**
 * `slipway run`: an HTTP upgrade on /v1/apps/:app/run?command=<JSON argv>; after it, standard
 * input flows in as raw bytes and output and the exit status flow out as frames. A client that
 * goes away takes the command with it.
 */
export async function handleRunUpgrade(deps: ApiDependencies, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
  // The run counts against the organisation's `runs` quota from its start to its end.
  let endRun: (() => void) | undefined;
  try {
    const url = new URL(req.url ?? '/', 'http://api.invalid');
    const match = RUN_PATH.exec(url.pathname);
    if (!match || req.headers.upgrade !== 'slipway-run') throw new SlipwayError(404, 'not_found', `Nothing to upgrade at ${url.pathname}.`);
    const { user, token } = authenticate(deps.store, req);
    requireScope({ method: serverRoutes.run.method, pattern: serverRoutes.run.path, spec: serverRoutes.run }, token);
    const app = appForUser(deps.store, user, decodePathSegment(match[1]!));
    const argv = parseOneOffCommand(url.searchParams.get('command'));
    const run = deps.services?.runOneOff;
    if (!run) throw new SlipwayError(503, 'unavailable', 'One-off commands are not available on this daemon.');
    endRun = quotasOf(deps).startRun(orgOfApp(deps, app));
    // The command may print before its start resolves: its frames wait for the upgrade's answer.
    let early: Buffer[] | undefined = [];
    const sandbox = await run(app, argv, (stream, chunk) => {
      const frame = encodeFrame(stream === 'out' ? FRAME.stdout : FRAME.stderr, chunk);
      if (early) early.push(frame);
      else socket.write(frame);
    });
    socket.write('HTTP/1.1 101 Switching Protocols\r\nupgrade: slipway-run\r\nconnection: Upgrade\r\n\r\n');
    for (const frame of early) socket.write(frame);
    early = undefined;
    if (head.length) sandbox.stdin?.write(head);
    socket.on('data', (chunk: Buffer) => sandbox.stdin?.write(chunk));
    socket.on('end', () => sandbox.stdin?.end());
    const clientGone = () => {
      if (!sandbox.exited()) void sandbox.signal('SIGKILL');
    };
    socket.on('error', clientGone);
    socket.on('close', clientGone);
    // A revoked token or a member removed ends the session within a second.
    const stopWatching = endWhenAccessEnds(deps.store, { tokenId: token.id, userId: user.id, appId: app.id }, (reason) => {
      if (!socket.destroyed) socket.write(encodeFrame(FRAME.stderr, `\nslipway: the session ends: ${reason}.\n`));
      void sandbox.signal('SIGKILL');
    });
    socket.once('close', stopWatching);
    // The client half-closes when its input ends, so only a failing write tells it is gone.
    const heartbeat = setInterval(() => {
      if (!socket.destroyed) socket.write(encodeFrame(FRAME.ping, ''));
    }, 1000);
    const exit = await sandbox.done.finally(() => {
      clearInterval(heartbeat);
      stopWatching();
    });
    const sandboxInfo = await deps.services!.sandboxOf!(app);
    const payload = {
      code: exit.exitCode,
      signal: exit.signal,
      outOfMemory: exit.outOfMemory,
      description: describeSandboxExit(exit, sandboxInfo),
    };
    if (!socket.destroyed) socket.end(encodeFrame(FRAME.exit, JSON.stringify(payload)));
  } catch (error) {
    if (!socket.destroyed) refuse(socket, error);
  } finally {
    endRun?.();
  }
}
