import { existsSync } from 'node:fs';

/**
 * The toolchain folders a release uses, out of the shared read-only folders the sandbox would
 * mount whole: those the environment names (PATH, JAVA_HOME...), as `<shared>/<tool>/<version>`.
 * The toolchains layer then holds the app's Node or JDK, not every version the machine cached.
 */
export function usedToolchainFolders(sharedFolders: string[], env: Record<string, string>): string[] {
  const used = new Set<string>();
  const pieces = Object.values(env).flatMap((value) => value.split(':'));
  for (const shared of sharedFolders) {
    const root = shared.replace(/\/+$/, '');
    for (const piece of pieces) {
      if (!piece.startsWith(`${root}/`)) continue;
      const [tool, version] = piece.slice(root.length + 1).split('/');
      if (!tool || !version || tool === '..' || version === '..' || tool === '.' || version === '.') continue;
      const folder = `${root}/${tool}/${version}`;
      // The shared folders are the platform's own cache, not a pushed tree.
      if (existsSync(folder)) used.add(folder);
    }
  }
  return [...used].sort();
}
