/**
 * Reading /proc/self/mountinfo: which folders are mount points and what is mounted there.
 * Fields (proc(5)): id, parent, major:minor, root, mount point, options, optional fields, `-`,
 * type, source, super options. Spaces and other bytes in paths are written as octal escapes.
 */
export function mountPointsFrom(text: string): Set<string> {
  return new Set(entries(text).map((e) => e.mountPoint));
}

/** The source (a device such as /dev/loop3) of the last mount over `mountPoint`, or undefined. */
export function mountSourceOf(text: string, mountPoint: string): string | undefined {
  return entries(text)
    .filter((e) => e.mountPoint === mountPoint)
    .at(-1)?.source;
}

/** Mount points at or below `folder`, deepest first (the order to unmount them in). */
export function mountsUnder(text: string, folder: string): string[] {
  const prefix = folder.endsWith('/') ? folder : `${folder}/`;
  return [...mountPointsFrom(text)].filter((p) => p === folder || p.startsWith(prefix)).sort((a, b) => b.length - a.length);
}

function entries(text: string): Array<{ mountPoint: string; source: string }> {
  const out: Array<{ mountPoint: string; source: string }> = [];
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    const dash = fields.indexOf('-');
    if (fields.length < 10 || dash < 6) continue;
    out.push({ mountPoint: unescapeOctal(fields[4]!), source: unescapeOctal(fields[dash + 2] ?? '') });
  }
  return out;
}

function unescapeOctal(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}
