import type { Db } from './database.js';
import { isSealed, type SecretBox, type SecretPlace, sealedKeyId, SecretUnreadable } from './secret-box.js';
import { SECRET_COLUMNS } from './secret-columns.js';

/**
 * The key the repositories seal and open secrets with. The daemon always gives one; a store
 * opened without (unit tests, the restore's bookkeeping of backups and releases) keeps values
 * in clear and refuses to read a sealed one. `replace` swaps the key once a rotation committed.
 */
export class StoreSecrets {
  constructor(private box: SecretBox | undefined) {}

  /** The key in use; undefined for a store opened without one. */
  get current(): SecretBox | undefined {
    return this.box;
  }

  seal(value: string, place: SecretPlace): string {
    return this.box ? this.box.seal(value, place) : value;
  }

  sealNullable(value: string | null, place: SecretPlace): string | null {
    return value === null ? null : this.seal(value, place);
  }

  open(stored: string, place: SecretPlace): string {
    if (this.box) return this.box.open(stored, place);
    if (isSealed(stored)) {
      throw new SecretUnreadable(
        `A secret in the store (${place.table}.${place.column}) is sealed, and the store was opened without the secrets key.`,
        'Open it with the secrets key file beside the data folder.',
      );
    }
    return stored;
  }

  openNullable(stored: string | null, place: SecretPlace): string | null {
    return stored === null ? null : this.open(stored, place);
  }

  replace(box: SecretBox): void {
    this.box = box;
  }
}

interface SecretCell {
  table: string;
  column: string;
  rowid: number;
  owner: string[];
  stored: string;
}

/** Every non-null secret cell of the store. */
function secretCells(db: Db): SecretCell[] {
  const cells: SecretCell[] = [];
  for (const { table, columns, owner } of SECRET_COLUMNS) {
    const rows = db.prepare(`SELECT rowid AS rowid, ${[...owner, ...columns].join(', ')} FROM ${table}`).all() as Array<
      Record<string, string | number | null>
    >;
    for (const row of rows) {
      for (const column of columns) {
        const stored = row[column];
        if (typeof stored !== 'string') continue;
        cells.push({ table, column, rowid: row.rowid as number, owner: owner.map((o) => String(row[o])), stored });
      }
    }
  }
  return cells;
}

function writeCell(db: Db, cell: SecretCell, stored: string): void {
  db.prepare(`UPDATE ${cell.table} SET ${cell.column} = ? WHERE rowid = ?`).run(stored, cell.rowid);
}

/**
 * Seals every value still in clear (a store written before secrets were sealed), in one
 * transaction. Values already sealed are left alone, so running it again changes nothing.
 * Returns how many values it sealed.
 */
export function sealClearSecrets(db: Db, box: SecretBox): number {
  return db.transaction(() => {
    let sealed = 0;
    for (const cell of secretCells(db)) {
      if (isSealed(cell.stored)) continue;
      writeCell(db, cell, box.seal(cell.stored, cell));
      sealed++;
    }
    return sealed;
  })();
}

/**
 * Opens every secret with `from` and seals it again with `to`, in one transaction: either every
 * value is under the new key or, on any failure, every value stays under the old one.
 */
export function resealSecrets(db: Db, from: SecretBox, to: SecretBox): number {
  return db.transaction(() => {
    const cells = secretCells(db);
    for (const cell of cells) writeCell(db, cell, to.seal(from.open(cell.stored, cell), cell));
    return cells.length;
  })();
}

/** The key ids the store's sealed values name, with how many values each. */
export function sealedKeyIds(db: Db): Map<string, number> {
  const ids = new Map<string, number>();
  for (const cell of secretCells(db)) {
    const id = sealedKeyId(cell.stored);
    if (id) ids.set(id, (ids.get(id) ?? 0) + 1);
  }
  return ids;
}
