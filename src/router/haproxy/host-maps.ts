/**
 * The maps HAProxy routes by: `hosts.map` (host -> backend), `wildcards.map` (`.suffix` ->
 * backend, longest first) and, with an HTTPS listener, `force-https.map` (backend -> 1). Each
 * is replaced whole through the runtime API (prepare, fill the new version, commit) and its file
 * rewritten after, so a HAProxy started again serves the same routes.
 */
import { readFile } from 'node:fs/promises';
import type { ValidatedRoute } from '../validate.js';
import { ASLEEP_VALUE, type HaproxyPaths, WAKE_VALUE } from './config.js';
import { expectAnswer, runtimeCommand } from './runtime-api.js';
import { writeFileAtomically } from './router-state.js';

type MapEntries = Array<[string, string]>;

export class HostMaps {
  /** The entries of each map as last committed (what its file holds). */
  private readonly maps = new Map<string, MapEntries>();

  constructor(
    private readonly paths: HaproxyPaths,
    private readonly withHttps: boolean,
  ) {}

  /** The maps the configuration uses: without an HTTPS listener it has no force-https map. */
  files(): string[] {
    return [
      this.paths.hostsMap,
      this.paths.wildcardMap,
      ...(this.withHttps ? [this.paths.forceHttpsMap] : []),
      ...(this.withHolds ? [this.paths.holdMap] : []),
    ];
  }

  /** Whether the running configuration has the hold map (see HaproxyConfigInput.holds). */
  withHolds = true;

  /**
   * The backends whose requests are held now (router hold) and those of the apps asleep (held
   * too, and marked so that their first request tells the daemon to wake them); the others' go on.
   */
  async hold(backends: readonly string[], asleep: readonly string[] = []): Promise<void> {
    await this.replace(this.paths.holdMap, [
      ...backends.map((backend): [string, string] => [backend, '1']),
      ...asleep.filter((backend) => !backends.includes(backend)).map((backend): [string, string] => [backend, ASLEEP_VALUE]),
    ]);
  }

  /** The backends of apps asleep as last committed (an adopted router's, from its file). */
  asleepBackends(): string[] {
    return (this.maps.get(this.paths.holdMap) ?? []).filter(([, value]) => value === ASLEEP_VALUE).map(([backend]) => backend);
  }

  /** The backends of apps asleep that a request now waits for (the hold action marked them), read from HAProxy. */
  async wakeRequests(): Promise<string[]> {
    const answer = await runtimeCommand(this.paths.adminSocket, `show map ${this.paths.holdMap}`, undefined, 2000);
    return answer
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields.length === 3 && fields[2] === WAKE_VALUE)
      .map((fields) => fields[1]!);
  }

  clear(): void {
    this.maps.clear();
  }

  /** After an adoption: the entries are what the files hold. */
  async readFiles(): Promise<void> {
    for (const map of this.files()) this.maps.set(map, await readMapFile(map));
    // A hold never outlives the daemon that made it: the next one commits the hold map without
    // them. An app asleep stays asleep (and held) across daemons: its next request wakes it.
    const asleep = (await readMapFile(this.paths.holdMap)).filter(([, value]) => value === ASLEEP_VALUE || value === WAKE_VALUE);
    this.maps.set(
      this.paths.holdMap,
      asleep.map(([backend]) => [backend, ASLEEP_VALUE]),
    );
  }

  /** Commits every map again as last committed (HAProxy may have started from older files). */
  async commitAgain(): Promise<void> {
    for (const map of this.files()) await this.replace(map, this.maps.get(map) ?? []);
  }

  /** Points the table's hosts at their apps' backends; `forceHttps`: the backends whose plain HTTP is redirected. */
  async route(routes: readonly ValidatedRoute[], backendOf: (appId: string) => string, forceHttps: readonly string[]): Promise<void> {
    await this.replace(
      this.paths.hostsMap,
      routes.filter((r) => !r.host.startsWith('*.')).map((r) => [r.host, backendOf(r.appId)]),
    );
    await this.replace(
      this.paths.wildcardMap,
      routes
        .filter((r) => r.host.startsWith('*.'))
        .map((r): [string, string] => [r.host.slice(1), backendOf(r.appId)])
        // map_end takes the first entry that matches: the most specific suffix must come first.
        .sort((a, b) => b[0].length - a[0].length),
    );
    // Without an HTTPS listener there is nowhere to redirect to: the configuration has no such map.
    if (this.withHttps)
      await this.replace(
        this.paths.forceHttpsMap,
        forceHttps.map((backend) => [backend, '1']),
      );
  }

  /** Replaces a whole map atomically (prepare, fill the new version, commit) and keeps the file in step for reloads. */
  private async replace(path: string, entries: MapEntries): Promise<void> {
    const socket = this.paths.adminSocket;
    const prepared = await expectAnswer(socket, `prepare map ${path}`, /New version created: \d+/);
    const version = /New version created: (\d+)/.exec(prepared)![1];
    for (let i = 0; i < entries.length; i += 200) {
      const payload = entries
        .slice(i, i + 200)
        .map(([k, v]) => `${k} ${v}`)
        .join('\n');
      await runtimeCommand(socket, `add map @${version} ${path}`, payload).then((answer) => {
        if (answer) throw new Error(`HAProxy refused entries of ${path}: ${answer.split('\n')[0]}`);
      });
    }
    await runtimeCommand(socket, `commit map @${version} ${path}`);
    this.maps.set(path, entries);
    await writeFileAtomically(path, entries.map(([k, v]) => `${k} ${v}\n`).join(''));
  }
}

/** A map file's entries (`key value` lines), as `replace` wrote them. */
async function readMapFile(path: string): Promise<MapEntries> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line.includes(' '))
    .map((line) => [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)]);
}
