/**
 * What the local backend writes down about each running instance so that a later daemon can
 * adopt it (its spec without the callbacks, and its network), one root-only JSON file per
 * instance in a folder of the data folder. The spec holds the app's environment, as the
 * sandbox's config.json does: the folder is the daemon's alone.
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { InstanceSpec } from '../backend.js';
import type { InstanceNetwork } from '../../network/netns-commands.js';
import { validateInstanceId } from './instance-id.js';

export type RecordedSpec = Omit<InstanceSpec, 'onLog' | 'onStateChange'>;

export interface InstanceRecord {
  spec: RecordedSpec;
  network: InstanceNetwork & { slot: number };
}

const validId = (id: string): boolean => {
  try {
    validateInstanceId(id);
    return true;
  } catch {
    return false;
  }
};

export class InstanceRecords {
  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
  }

  write(spec: InstanceSpec, network: InstanceRecord['network']): void {
    const { onLog: _onLog, onStateChange: _onStateChange, ...recorded } = spec;
    const record: InstanceRecord = { spec: recorded, network };
    const path = this.path(spec.instanceId);
    writeFileSync(`${path}.tmp`, JSON.stringify(record), { mode: 0o600 });
    renameSync(`${path}.tmp`, path);
  }

  remove(instanceId: string): void {
    rmSync(this.path(instanceId), { force: true });
  }

  /**
   * Every record readable in the folder, newest first: of two instances with the same number (a
   * replacement and the one it replaced, when the daemon died between the two), the newer one is
   * adopted. An unreadable record is removed (nothing could adopt it).
   */
  all(): InstanceRecord[] {
    const found: Array<InstanceRecord & { writtenAt: number }> = [];
    for (const entry of readdirSync(this.dir)) {
      const id = entry.endsWith('.json') ? entry.slice(0, -5) : '';
      if (!validId(id)) {
        rmSync(join(this.dir, entry), { force: true });
        continue;
      }
      try {
        const record = JSON.parse(readFileSync(join(this.dir, entry), 'utf8')) as InstanceRecord;
        if (record.spec?.instanceId === id && Number.isInteger(record.network?.slot)) {
          found.push({ ...record, writtenAt: statSync(join(this.dir, entry)).mtimeMs });
        } else rmSync(join(this.dir, entry), { force: true });
      } catch {
        rmSync(join(this.dir, entry), { force: true });
      }
    }
    return found.sort((a, b) => b.writtenAt - a.writtenAt).map(({ writtenAt: _, ...record }) => record);
  }

  private path(instanceId: string): string {
    return join(this.dir, `${validateInstanceId(instanceId)}.json`);
  }
}
