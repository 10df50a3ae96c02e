import { DockerApiError, type DockerApi } from './docker-api.js';

/** Docker wants an (empty) auth header on push and pull even for a registry without authentication. */
const NO_AUTH = Buffer.from('{}').toString('base64');

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

/** Pushes `<registry>/<repository>:<tag>` from the node of `api` to its registry. */
export async function pushImage(api: DockerApi, name: string, registry: string): Promise<void> {
  const { repository, tag } = splitName(name);
  await api.progress({
    method: 'POST',
    path: `/images/${repository}/push`,
    query: { tag },
    headers: { 'X-Registry-Auth': NO_AUTH },
    what: `push ${name} to the registry ${registry}`,
  });
}

/** Pulls `<registry>/<repository>:<tag>` onto the node of `api`; `where` names the node in errors. */
export async function pullImage(api: DockerApi, name: string, where: string): Promise<void> {
  const { repository, tag } = splitName(name);
  await api.progress({
    method: 'POST',
    path: '/images/create',
    query: { fromImage: repository, tag },
    headers: { 'X-Registry-Auth': NO_AUTH },
    what: `pull ${name} on ${where}`,
  });
}
