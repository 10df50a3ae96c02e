import { readFileSync } from 'node:fs';
import https from 'node:https';

/** Manifest formats Docker pushes; the registry answers a HEAD with the digest of the one it holds. */
const MANIFEST_TYPES = [
  'application/vnd.docker.distribution.manifest.v2+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
].join(', ');

/** Where `scripts/swarm-setup.sh` writes the registry's password (root only) and which user it makes. */
export const DEFAULT_REGISTRY_USER = 'slipway';
export const DEFAULT_REGISTRY_PASSWORD_FILE = '/etc/slipway/registry-password';
const SETUP_HINT = 'scripts/swarm-setup.sh makes the registry, its CA and its password; docs/swarm.md, "Images"';

/** The CA the Docker engine trusts for the registry: the same file is the daemon's default. */
export function dockerCaFile(address: string): string {
  return `/etc/docker/certs.d/${address}/ca.crt`;
}

export interface RegistryAccessOptions {
  /** host:port, e.g. `127.0.0.1:5000`. */
  address: string;
  user: string;
  /** A file holding the password (its first line), readable by root only. */
  passwordFile: string;
  /** The CA that signed the registry's certificate (PEM). */
  caFile: string;
}

/**
 * The image registry every swarm node pulls from, as the daemon reaches it: over TLS (a CA of the
 * operator's, the one the Docker engine trusts for it) with a user and password. The same
 * credential goes to the Docker engine as `X-Registry-Auth` on pushes, pulls and service
 * creations, which hands it to the node running each task (`docker service create
 * --with-registry-auth`): the nodes need no login of their own.
 */
export class RegistryAccess {
  readonly address: string;
  /** The Engine API's `X-Registry-Auth`: base64url of the credential's JSON, padded as Docker reads it. */
  readonly engineAuth: string;
  private readonly authorization: string;
  private readonly ca: Buffer;
  private readonly user: string;

  constructor(o: { address: string; user: string; password: string; ca: Buffer }) {
    if (!/^[a-z0-9.-]+(:\d+)?$/.test(o.address))
      throw new Error(`The registry must be host:port (e.g. 127.0.0.1:5000), not ${JSON.stringify(o.address)}.`);
    this.address = o.address;
    this.user = o.user;
    this.ca = o.ca;
    this.authorization = `Basic ${Buffer.from(`${o.user}:${o.password}`).toString('base64')}`;
    this.engineAuth = Buffer.from(JSON.stringify({ username: o.user, password: o.password, serveraddress: o.address }))
      .toString('base64')
      .replace(/\+/g, '-')
      .replace(/\//g, '_');
  }

  /**
   * Reads the password and the CA from the operator's files. The files' content is never quoted
   * in an error: the password file is a secret.
   */
  static load(o: RegistryAccessOptions): RegistryAccess {
    const read = (file: string, what: string, flag: string) => {
      try {
        return readFileSync(file);
      } catch (e) {
        throw new Error(
          `Cannot read the ${what} of the swarm registry ${o.address} at ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'}): give it with ${flag} (${SETUP_HINT}).`,
        );
      }
    };
    const password = read(o.passwordFile, 'password', '--registry-password-file').toString('utf8').split('\n')[0]!.trim();
    if (!password) throw new Error(`The registry password file ${o.passwordFile} is empty.`);
    if (!o.user || /[:\s]/.test(o.user)) throw new Error(`Invalid registry user ${JSON.stringify(o.user)}: no colon or space.`);
    const ca = read(o.caFile, 'CA certificate', '--registry-ca');
    return new RegistryAccess({ address: o.address, user: o.user, password, ca });
  }

  /**
   * Checks at start that the registry answers over TLS and takes the credential, saying what is
   * wrong when not: a daemon that cannot push would otherwise fail only at the next deployment.
   */
  async check(): Promise<void> {
    let status: number;
    try {
      status = (await this.request('GET', '/v2/', {})).status;
    } catch (e) {
      throw new Error(
        `Cannot reach the swarm registry at https://${this.address}/v2/: ${(e as Error).message}. Is it running, with TLS from the CA given by --registry-ca (${SETUP_HINT})?`,
      );
    }
    if (status === 401)
      throw new Error(
        `The swarm registry ${this.address} refused user ${JSON.stringify(this.user)} with the password given (HTTP 401): check --registry-user and --registry-password-file (${SETUP_HINT}).`,
      );
    if (status !== 200) throw new Error(`The swarm registry ${this.address} answered HTTP ${status} to /v2/, not 200.`);
  }

  /**
   * Deletes `<repository>:<tag>` (Docker Registry HTTP API v2): the registry deletes manifests by
   * digest only. The layers go at the registry's next garbage collection.
   */
  async deleteTag(repositoryAndTag: string): Promise<void> {
    const colon = repositoryAndTag.lastIndexOf(':');
    const repository = repositoryAndTag.slice(0, colon);
    const tag = repositoryAndTag.slice(colon + 1);
    const head = await this.request('HEAD', `/v2/${repository}/manifests/${tag}`, { accept: MANIFEST_TYPES });
    if (head.status === 404) return;
    const digest = head.headers['docker-content-digest'];
    if (head.status !== 200 || typeof digest !== 'string')
      throw new Error(`The registry ${this.address} did not give the digest of ${repositoryAndTag} (HTTP ${head.status}).`);
    const del = await this.request('DELETE', `/v2/${repository}/manifests/${digest}`, {});
    if (del.status !== 202 && del.status !== 404)
      throw new Error(
        `The registry ${this.address} refused to delete ${repositoryAndTag} (HTTP ${del.status}); start it with storage.delete.enabled.`,
      );
  }

  /** A request to the registry's HTTP API, authenticated, over TLS verified against the CA. */
  request(method: string, path: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown> }> {
    const [host, port] = this.address.split(':');
    return new Promise((resolve, reject) => {
      const req = https.request(
        {
          host,
          port: Number(port ?? 443),
          method,
          path,
          ca: this.ca,
          headers: { ...headers, authorization: this.authorization },
          timeout: 10_000,
          agent: false,
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
        },
      );
      req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
      req.on('error', reject);
      req.end();
    });
  }
}
