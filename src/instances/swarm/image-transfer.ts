import { DockerApiError, type DockerApi } from './docker-api.js';
import type { RegistryAccess } from './registry.js';

function splitName(name: string): { repository: string; tag: string } {
  const colon = name.lastIndexOf(':');
  return { repository: name.slice(0, colon), tag: name.slice(colon + 1) };
}

/** Whether the node of `api` holds the image `<repository>:<tag>`. */
export async function imageExists(api: DockerApi, name: string): Promise<boolean> {
  try {
    await api.json({ path: `/images/${name}/json`, what: 'inspect an image' });
    return true;
  } catch (e) {
    if (e instanceof DockerApiError && e.status === 404) return false;
    throw e;
  }
}

/**
 * Pushes `<registry>/<repository>:<tag>` from the node of `api` to its registry and resolves with
 * the digest of the manifest the registry holds (`sha256:...`), which names the content: a tag
 * pushed again later cannot change what a service pinned to the digest runs.
 */
export async function pushImage(api: DockerApi, name: string, registry: RegistryAccess): Promise<string> {
  const { repository, tag } = splitName(name);
  let digest: string | undefined;
  await api.progress(
    {
      method: 'POST',
      path: `/images/${repository}/push`,
      query: { tag },
      headers: { 'X-Registry-Auth': registry.engineAuth },
      what: `push ${name} to the registry ${registry.address}`,
    },
    (message) => (digest = pushedDigest(message) ?? digest),
  );
  if (!digest) throw new Error(`The push of ${name} to the registry ${registry.address} did not tell the image's digest.`);
  return digest;
}

/** The digest a push's progress message carries at its end (`aux.Digest`), if it is that message. */
export function pushedDigest(message: Record<string, unknown>): string | undefined {
  const aux = message.aux;
  if (typeof aux !== 'object' || aux === null) return undefined;
  const digest = (aux as Record<string, unknown>).Digest;
  return typeof digest === 'string' && /^sha256:[0-9a-f]{64}$/.test(digest) ? digest : undefined;
}

/** `<repository>@<digest>` of `<repository>:<tag>`: the name a service pulls the pushed content by. */
export function pinnedName(name: string, digest: string): string {
  if (!/^sha256:[0-9a-f]{64}$/.test(digest)) throw new Error(`Not an image digest: ${JSON.stringify(digest)}.`);
  return `${splitName(name).repository}@${digest}`;
}

/** Pulls `<registry>/<repository>:<tag>` onto the node of `api` with the registry's credential; `where` names the node in errors. */
export async function pullImage(api: DockerApi, name: string, registry: RegistryAccess, where: string): Promise<void> {
  const { repository, tag } = splitName(name);
  await api.progress({
    method: 'POST',
    path: '/images/create',
    query: { fromImage: repository, tag },
    headers: { 'X-Registry-Auth': registry.engineAuth },
    what: `pull ${name} on ${where}`,
  });
}
