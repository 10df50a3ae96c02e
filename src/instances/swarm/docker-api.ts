import http from 'node:http';
import type { Duplex, Readable } from 'node:stream';

/** Engine API version spoken: Docker 20.10 (Debian bookworm's docker.io) and anything newer. */
export const DOCKER_API_VERSION = 'v1.41';
export const DEFAULT_DOCKER_SOCKET = '/var/run/docker.sock';

export class DockerApiError extends Error {
  constructor(
    readonly status: number,
    readonly what: string,
    message: string,
  ) {
    super(`Docker refused to ${what} (HTTP ${status}): ${message}`);
  }
}

export interface DockerRequest {
  method?: string;
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** A request body streamed as is (a tar archive), instead of JSON. */
  stream?: Readable;
  headers?: Record<string, string>;
  /** Says what the request does, in error messages. */
  what: string;
  timeoutMs?: number;
}

/** Where an Engine API listens: a unix socket (`/path`, `unix:///path`) or `tcp://host:port`. */
export type DockerEndpoint = { socketPath: string } | { host: string; port: number };

export function parseDockerEndpoint(text: string): DockerEndpoint {
  if (text.startsWith('/')) return { socketPath: text };
  if (text.startsWith('unix:///')) return { socketPath: text.slice('unix://'.length) };
  const tcp = /^(?:tcp|http):\/\/(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})\/?$/.exec(text);
  if (tcp) return { host: tcp[1]!.replace(/^\[|\]$/g, ''), port: Number(tcp[2]) };
  throw new Error(
    `Invalid Docker API address ${JSON.stringify(text)}: a unix socket (/run/docker.sock, unix:///run/docker.sock) or tcp://host:port.`,
  );
}

/**
 * The Docker Engine API over its unix socket (or a TCP address), with nothing but node:http: no
 * client library to keep in step with the daemon, and the same calls reach a local dockerd, a
 * swarm manager or a worker node.
 */
export class DockerApi {
  readonly endpoint: DockerEndpoint;

  constructor(
    readonly address = DEFAULT_DOCKER_SOCKET,
    /** What to do when nothing answers there (the control machine's dockerd by default). */
    private readonly unreachableHint = HOW_TO_START_DOCKER,
  ) {
    this.endpoint = parseDockerEndpoint(address);
  }

  /** Sends a request and resolves with the parsed JSON answer (undefined for an empty body). */
  async json<T = unknown>(request: DockerRequest): Promise<T> {
    const res = await this.open(request);
    const text = await readAll(res).catch((e: Error) => {
      throw new Error(`The Docker API connection broke while trying to ${request.what}: ${e.message}`);
    });
    if ((res.statusCode ?? 500) >= 300) throw errorOf(res.statusCode ?? 500, request.what, text);
    return (text.trim() === '' ? undefined : JSON.parse(text)) as T;
  }

  /** Sends a request and resolves with the answer's body as a stream (logs, build, push progress). */
  async stream(request: DockerRequest): Promise<http.IncomingMessage> {
    const res = await this.open(request);
    if ((res.statusCode ?? 500) >= 300) throw errorOf(res.statusCode ?? 500, request.what, await readAll(res));
    return res;
  }

  /**
   * Follows a progress stream of JSON objects (build, push, import) to its end; throws the first
   * `error` it reports, which Docker sends with a 200 status once the stream has begun.
   */
  async progress(request: DockerRequest, onMessage?: (message: Record<string, unknown>) => void): Promise<void> {
    const res = await this.stream(request);
    let pending = '';
    let failure: string | undefined;
    const chunks = (async function* () {
      try {
        for await (const chunk of res) yield chunk as Buffer;
      } catch (e) {
        throw new Error(`The Docker API connection broke while trying to ${request.what}: ${(e as Error).message}`);
      }
    })();
    for await (const chunk of chunks) {
      pending += (chunk as Buffer).toString('utf8');
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl).trim();
        pending = pending.slice(nl + 1);
        if (!line) continue;
        let message: Record<string, unknown>;
        try {
          message = JSON.parse(line) as Record<string, unknown>;
        } catch {
          continue;
        }
        if (typeof message.error === 'string') failure ??= message.error;
        onMessage?.(message);
      }
    }
    if (failure) throw new DockerApiError(200, request.what, failure);
  }

  /**
   * Sends a request that Docker answers by taking over the connection (an exec's start with
   * its standard input): resolves with the raw socket, both ways, and what came with the answer.
   */
  upgrade(request: DockerRequest): Promise<{ socket: Duplex; head: Buffer }> {
    return new Promise((resolve, reject) => {
      const req = http.request({
        ...this.endpoint,
        agent: false,
        method: request.method ?? 'POST',
        path: `/${DOCKER_API_VERSION}${request.path}`,
        headers: { 'content-type': 'application/json', connection: 'Upgrade', upgrade: 'tcp' },
      });
      req.on('upgrade', (_res, socket, head) => resolve({ socket, head }));
      req.on('response', (res) => void readAll(res).then((text) => reject(errorOf(res.statusCode ?? 500, request.what, text)), reject));
      req.on('error', (e) => reject(new Error(`The Docker API connection broke while trying to ${request.what}: ${e.message}`)));
      req.end(JSON.stringify(request.body ?? {}));
    });
  }

  private open(request: DockerRequest): Promise<http.IncomingMessage> {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(request.query ?? {})) if (v !== undefined) query.set(k, String(v));
    const qs = query.toString();
    const headers: Record<string, string> = { ...request.headers };
    let payload: string | undefined;
    if (request.body !== undefined) {
      payload = JSON.stringify(request.body);
      headers['content-type'] = 'application/json';
    }
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          ...this.endpoint,
          // A connection per request: dockerd may close an idle kept-alive one just as it is reused.
          agent: false,
          method: request.method ?? 'GET',
          path: `/${DOCKER_API_VERSION}${request.path}${qs ? `?${qs}` : ''}`,
          headers,
          timeout: request.timeoutMs,
        },
        resolve,
      );
      req.on('timeout', () => req.destroy(new Error(`Docker did not answer in time while trying to ${request.what}.`)));
      req.on('error', (e: NodeJS.ErrnoException) => {
        if (e.code === 'ENOENT' || e.code === 'ECONNREFUSED' || e.code === 'EACCES') {
          reject(new Error(`Cannot reach the Docker API at ${this.address} (${e.code}) to ${request.what}. ${this.unreachableHint}`));
        } else reject(new Error(`The Docker API connection broke while trying to ${request.what}: ${e.message}`));
      });
      if (request.stream) {
        request.stream.on('error', (e) => req.destroy(e));
        request.stream.pipe(req);
      } else req.end(payload);
    });
  }
}

export const HOW_TO_START_DOCKER =
  'Start dockerd on this machine (as root: scripts/swarm-setup.sh starts it with --iptables=false, makes the node a swarm manager and starts a registry on 127.0.0.1:5000), or point --docker-socket at a running one.';

function readAll(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

function errorOf(status: number, what: string, body: string): DockerApiError {
  let message = body.trim();
  try {
    const parsed = JSON.parse(body) as { message?: string };
    if (parsed.message) message = parsed.message;
  } catch {
    // not JSON: keep the text
  }
  return new DockerApiError(status, what, message || '(no message)');
}
