import http from 'node:http';

/** Manifest formats Docker pushes; the registry answers a HEAD with the digest of the one it holds. */
const MANIFEST_TYPES = [
  'application/vnd.docker.distribution.manifest.v2+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
].join(', ');

/**
 * Deletes `<repository>:<tag>` from a registry (Docker Registry HTTP API v2): the registry
 * deletes manifests by digest only. The layers go at the registry's next garbage collection.
 */
export async function deleteFromRegistry(registry: string, repositoryAndTag: string): Promise<void> {
  const colon = repositoryAndTag.lastIndexOf(':');
  const repository = repositoryAndTag.slice(0, colon);
  const tag = repositoryAndTag.slice(colon + 1);
  const head = await request(registry, 'HEAD', `/v2/${repository}/manifests/${tag}`, { accept: MANIFEST_TYPES });
  if (head.status === 404) return;
  const digest = head.headers['docker-content-digest'];
  if (head.status !== 200 || typeof digest !== 'string')
    throw new Error(`The registry ${registry} did not give the digest of ${repositoryAndTag} (HTTP ${head.status}).`);
  const del = await request(registry, 'DELETE', `/v2/${repository}/manifests/${digest}`, {});
  if (del.status !== 202 && del.status !== 404)
    throw new Error(
      `The registry ${registry} refused to delete ${repositoryAndTag} (HTTP ${del.status}); start it with storage.delete.enabled.`,
    );
}

function request(
  registry: string,
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: http.IncomingHttpHeaders }> {
  const [host, port] = registry.split(':');
  return new Promise((resolve, reject) => {
    const req = http.request({ host, port: Number(port ?? 80), method, path, headers, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on('timeout', () => req.destroy(new Error(`The registry ${registry} did not answer in time.`)));
    req.on('error', reject);
    req.end();
  });
}
