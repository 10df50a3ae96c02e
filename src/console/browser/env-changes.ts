/**
 * The Environment variables page's pending changes: variables are added, changed or removed
 * here first, then saved all together ("Update changes") as the full new list.
 */
export interface EnvPair {
  name: string;
  value: string;
}

export type RowState = 'saved' | 'added' | 'changed' | 'removed';

export interface EnvRow {
  name: string;
  value: string;
  state: RowState;
  /** The saved value, when the row changes it. */
  savedValue?: string;
}

export class EnvDraft {
  private readonly saved: Map<string, string>;
  private readonly pending = new Map<string, string | null>();

  constructor(saved: EnvPair[]) {
    this.saved = new Map(saved.map((v) => [v.name, v.value]));
  }

  /** Adds a variable, or gives an existing one a new value. */
  set(name: string, value: string): 'added' | 'changed' | 'unchanged' {
    const before = this.saved.get(name);
    if (before === value) {
      this.pending.delete(name);
      return 'unchanged';
    }
    this.pending.set(name, value);
    return before === undefined ? 'added' : 'changed';
  }

  /** Marks a saved variable for removal, or drops a pending addition. */
  remove(name: string): void {
    if (this.saved.has(name)) this.pending.set(name, null);
    else this.pending.delete(name);
  }

  /** Forgets the pending change of one variable. */
  undo(name: string): void {
    this.pending.delete(name);
  }

  /** Forgets every pending change. */
  discard(): void {
    this.pending.clear();
  }

  changeCount(): number {
    return this.pending.size;
  }

  rows(): EnvRow[] {
    const names = [...new Set([...this.saved.keys(), ...this.pending.keys()])].sort();
    return names.map((name) => {
      const saved = this.saved.get(name);
      if (!this.pending.has(name)) return { name, value: saved!, state: 'saved' };
      const next = this.pending.get(name);
      if (next === null) return { name, value: saved!, state: 'removed' };
      if (saved === undefined) return { name, value: next!, state: 'added' };
      return { name, value: next!, state: 'changed', savedValue: saved };
    });
  }

  /** The whole list to save: what PUT /v1/apps/:app/env replaces the variables with. */
  result(): EnvPair[] {
    return this.rows()
      .filter((r) => r.state !== 'removed')
      .map(({ name, value }) => ({ name, value }));
  }
}
