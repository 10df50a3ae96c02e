import { type ProcessGroup, spawnProcessGroup } from '../executor/process-group.js';
import type { AddressInfo } from 'node:net';
import ssh2 from 'ssh2';
import type { AuthContext, Connection, ServerChannel, Session } from 'ssh2';
import { acceptableGitProtocol, gitServiceArgv, PACK_TOO_LARGE, parseGitCommand, USAGE_HINT, type GitService } from './git-command.js';
import { fingerprintOf } from '../core/ssh-public-key.js';
import { gitEnvironment } from './git-environment.js';
import { ensureHostKey } from './host-key.js';
import { PushReportListener, type RefUpdate } from './push-report-listener.js';
import { NODE_BINARY_ENV, PUSH_SOCKET_ENV } from './repo-hooks.js';
import type { RepoStore } from './repo-store.js';

const { Server, utils } = ssh2;

export interface ReceiverHooks {
  /** Returns the user id owning this public key, or null. */
  authenticate(key: { algorithm: string; data: Buffer; fingerprint: string }): Promise<string | null>;
  /** May this user push to / fetch from this app? (false => same message as unknown app: never reveal existence) */
  authorize(userId: string, appId: string, access: 'push' | 'fetch'): Promise<boolean>;
  /** Called after a successful push that updated refs/heads/master; `say` writes lines to the pusher's terminal. Return when the deployment is queued. */
  onPush(push: { userId: string; appId: string; before: string | null; after: string }, say: (line: string) => void): Promise<void>;
  /**
   * Before a push: prepares where the app's repository lives and says how many bytes its pack
   * may take, with the lines told to the pusher when it is larger. Absent or null: no limit.
   */
  pushLimit?(appId: string): Promise<{ maxBytes: number; refusal: string[] } | null>;
}

export interface GitSshServerOptions {
  host: string;
  /** 0 picks a free port; start() returns the one chosen. */
  port: number;
  /** Created (ed25519, mode 0600) when missing. */
  hostKeyPath: string;
  repos: RepoStore;
  hooks: ReceiverHooks;
  /** Operator-facing diagnostics (never key material). Defaults to stderr. */
  log?: (line: string) => void;
}

/** The only SSH user name: the app is chosen by the repository path, the person by the key. */
const GIT_USER = 'git';
/** Unauthenticated connections are dropped after this long, so they cannot pile up. */
const LOGIN_GRACE_MS = 30_000;
/** Key offers refused before the connection is dropped (an ssh agent may offer several). */
const MAX_AUTH_REFUSALS = 12;

/**
 * The message for an unknown app and for an app the user may not use are the same, so the
 * endpoint never confirms that an app id exists to someone outside its organisation.
 */
export function noSuchRepositoryMessage(appId: string): string {
  return (
    `fatal: '${appId}.git' does not exist, or you have no access to it.\n` +
    'Check the app id in your remote (`git remote -v`) and that the SSH key you push with is ' +
    "registered to a member of the app's organisation (`slipway ssh-keys list`)."
  );
}

/** SSH server that serves `git push` / `git fetch` for apps, one bare repository per app. */
export class GitSshServer {
  private server: InstanceType<typeof Server> | null = null;
  private readonly clients = new Set<Connection>();
  private readonly log: (line: string) => void;
  private fingerprint: string | null = null;

  constructor(private readonly options: GitSshServerOptions) {
    this.log = options.log ?? ((line) => process.stderr.write(`[receiver] ${line}\n`));
  }

  /** The host key's `SHA256:...` fingerprint, once started: users compare it on first connect. */
  get hostKeyFingerprint(): string | null {
    return this.fingerprint;
  }

  async start(): Promise<{ port: number }> {
    if (this.server) throw new Error('The git SSH server is already started.');
    const hostKey = await ensureHostKey(this.options.hostKeyPath);
    this.fingerprint = hostKey.fingerprint;
    const server = new Server({ hostKeys: [hostKey.privateKey], ident: 'slipway' }, (client) => this.onConnection(client));
    await new Promise<void>((resolve, reject) => {
      const onError = (error: NodeJS.ErrnoException) => {
        reject(
          new Error(
            `The git SSH server could not listen on ${this.options.host}:${this.options.port} ` +
              `(${error.code ?? error.message}). Choose another port with --ssh-port or stop what uses it.`,
          ),
        );
      };
      server.once('error', onError);
      server.listen(this.options.port, this.options.host, () => {
        server.off('error', onError);
        server.on('error', (error: Error) => this.log(`SSH server error: ${error.message}`));
        resolve();
      });
    });
    this.server = server;
    return { port: (server.address() as AddressInfo).port };
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Open sessions would keep close() waiting; ending them kills their git processes too.
    for (const client of this.clients) client.end();
    await closed;
  }

  private onConnection(client: Connection): void {
    this.clients.add(client);
    let userId: string | null = null;
    let refusals = 0;
    const knownKeys = new Map<string, string | null>();
    const loginTimer = setTimeout(() => client.end(), LOGIN_GRACE_MS);

    client.on('error', (error: Error) => this.log(`SSH connection error: ${error.message}`));
    client.on('close', () => {
      clearTimeout(loginTimer);
      this.clients.delete(client);
    });

    client.on('authentication', (ctx: AuthContext) => {
      const refuse = () => {
        refusals += 1;
        if (refusals > MAX_AUTH_REFUSALS) {
          client.end();
          return;
        }
        ctx.reject(['publickey']);
      };
      if (ctx.method !== 'publickey' || ctx.username !== GIT_USER) return refuse();
      const blob = ctx.key.data;
      const key = utils.parseKey(blob);
      if (key instanceof Error || Array.isArray(key)) return refuse();
      const fingerprint = fingerprintOf(blob);
      const lookup = knownKeys.has(fingerprint)
        ? Promise.resolve(knownKeys.get(fingerprint) ?? null)
        : this.options.hooks.authenticate({ algorithm: key.type, data: Buffer.from(blob), fingerprint });
      lookup.then(
        (owner) => {
          knownKeys.set(fingerprint, owner);
          if (!owner) return refuse();
          // Without a signature the client only asks whether this key would do.
          if (!ctx.signature || !ctx.blob) return ctx.accept();
          if (key.verify(ctx.blob, ctx.signature, ctx.hashAlgo) !== true) return refuse();
          userId = owner;
          ctx.accept();
        },
        (error: unknown) => {
          this.log(`Key lookup failed for ${fingerprint}: ${(error as Error).message}`);
          refuse();
        },
      );
    });

    client.on('ready', () => {
      clearTimeout(loginTimer);
      const user = userId;
      if (!user) return client.end();
      client.on('session', (accept) => this.onSession(accept(), user));
    });
    // Port forwarding and other global requests: ssh2 refuses them when nobody listens.
  }

  private onSession(session: Session, userId: string): void {
    const gitEnv: Record<string, string> = {};
    session.on('env', (accept, reject, info) => {
      if (info.key === 'GIT_PROTOCOL' && acceptableGitProtocol(info.val)) {
        gitEnv.GIT_PROTOCOL = info.val;
        accept?.();
      } else {
        reject?.();
      }
    });
    session.on('pty', (_accept, reject) => reject?.());
    session.on('shell', (accept) => {
      refuseChannel(accept(), `Interactive logins are not available. ${USAGE_HINT}`);
    });
    session.on('exec', (accept, _reject, info) => {
      const channel = accept();
      this.serveGit(channel, info.command, userId, gitEnv).catch((error: unknown) => {
        this.log(`git request failed: ${(error as Error).message}`);
        refuseChannel(
          channel,
          'fatal: the git server failed while handling this request; try again, and tell the operator if it persists.',
        );
      });
    });
  }

  private async serveGit(channel: ServerChannel, command: string, userId: string, gitEnv: Record<string, string>): Promise<void> {
    const parsed = parseGitCommand(command);
    if (!parsed.ok) return refuseChannel(channel, parsed.reason);
    const { appId, service } = parsed;
    const access = service === 'receive-pack' ? 'push' : 'fetch';
    if (!(await this.options.hooks.authorize(userId, appId, access))) {
      return refuseChannel(channel, noSuchRepositoryMessage(appId));
    }
    const limit = access === 'push' ? ((await this.options.hooks.pushLimit?.(appId)) ?? null) : null;
    const repoPath = await this.options.repos.ensure(appId);
    if (access === 'fetch') {
      const status = await this.runGit(channel, service, repoPath, gitEnv);
      return finishChannel(channel, status);
    }

    const headBefore = await this.options.repos.head(appId);
    const queueDeployment = async (update: RefUpdate, say: (line: string) => void) => {
      if (!update.after) return;
      try {
        await this.options.hooks.onPush({ userId, appId, before: update.before, after: update.after }, say);
      } catch (error) {
        this.log(`Queueing a deployment of ${appId} at ${update.after} failed: ${(error as Error).message}`);
        say(`slipway: commit ${update.after} is stored, but no deployment could be queued: ${(error as Error).message}`);
        say('slipway: run `slipway deploy` to try again.');
        throw error;
      }
    };
    const listener = await PushReportListener.open(async (updates, say) => {
      const master = updates.find((update) => update.ref === 'refs/heads/master');
      if (master) await queueDeployment(master, say);
    });
    try {
      const watch = { tooLarge: false };
      let status = await this.runGit(
        channel,
        service,
        repoPath,
        { ...gitEnv, [PUSH_SOCKET_ENV]: listener.socketPath, [NODE_BINARY_ENV]: process.execPath },
        limit ? { maxInputBytes: limit.maxBytes, watch } : undefined,
      );
      if (watch.tooLarge && limit) {
        for (const line of limit.refusal) channel.stderr.write(`${line}\n`);
        status = 1;
      }
      if (await listener.settled()) status = 1;
      if (status === 0 && !listener.reported) {
        // The hook could not reach us, yet master may have moved: queue it now, telling the
        // pusher on stderr (shown by ssh without git's `remote:` prefix).
        const headAfter = await this.options.repos.head(appId);
        if (headAfter && headAfter !== headBefore) {
          const say = (line: string) => channel.stderr.write(`${line}\n`);
          await queueDeployment({ ref: 'refs/heads/master', before: headBefore, after: headAfter }, say).catch(() => (status = 1));
        }
      }
      finishChannel(channel, status);
    } finally {
      await listener.close();
    }
  }

  /** Runs `git <service> <repo>` with the SSH channel as its stdio; resolves with its exit status. */
  private async runGit(
    channel: ServerChannel,
    service: GitService,
    repoPath: string,
    env: Record<string, string>,
    limit?: { maxInputBytes: number; watch: { tooLarge: boolean } },
  ): Promise<number> {
    let git: ProcessGroup;
    try {
      const environment = Object.fromEntries(Object.entries(gitEnvironment(env)).filter((e): e is [string, string] => e[1] !== undefined));
      const argv = gitServiceArgv(service, repoPath, limit?.maxInputBytes);
      git = await spawnProcessGroup({ argv, cwd: '/', env: environment, stdin: true, rawOutput: true });
    } catch (error) {
      this.log(`Could not start git ${service}: ${(error as Error).message}`);
      channel.stderr.write('fatal: the git server could not start git; tell the operator.\n');
      return 1;
    }
    // git may exit before reading everything the client sent: the executor ignores EPIPE.
    channel.pipe(git.stdin!);
    // end: false, the channel must stay open to carry the exit status after the output.
    git.stdout!.pipe(channel, { end: false });
    git.stderr!.pipe(channel.stderr, { end: false });
    if (limit) {
      // git reports the refusal in its side band (stdout) or on stderr; the last bytes of
      // each are kept so a message cut between two chunks is still seen.
      for (const stream of [git.stdout!, git.stderr!]) {
        let tail = '';
        stream.on('data', (chunk: Buffer) => {
          tail = (tail + chunk.toString('latin1')).slice(-4096);
          if (tail.includes(PACK_TOO_LARGE)) limit.watch.tooLarge = true;
        });
      }
    }
    // A client hanging up ends git and whatever it started (pack-objects, the hooks).
    const hangUp = () => {
      if (!git.exited()) git.signalGroup('SIGTERM');
    };
    channel.on('close', hangUp);
    const exit = await git.done;
    channel.off('close', hangUp);
    return exit.exitCode ?? (exit.signal ? 1 : 0);
  }
}

function refuseChannel(channel: ServerChannel, message: string): void {
  channel.stderr.write(`${message}\n`);
  finishChannel(channel, 1);
}

function finishChannel(channel: ServerChannel, status: number): void {
  if (channel.destroyed) return;
  channel.exit(status);
  channel.end();
}
