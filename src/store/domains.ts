import { createHash } from 'node:crypto';
import type { Db } from './database.js';
import { ConflictError, NotFoundError } from '../core/errors.js';

export interface DomainRow {
  fqdn: string;
  app_id: string;
  favourite: 0 | 1;
  created_at: string;
  /** What the TXT record `_slipway-challenge.<domain>` must hold to prove the domain. */
  verification_token: string | null;
  /** Null while the domain waits for its proof: not routed, no certificate. */
  verified_at: string | null;
}

type Listener = () => void;

/** Custom domains: each belongs to one application on the whole platform. */
export class DomainRepository {
  private readonly listeners = new Set<Listener>();

  constructor(private readonly db: Db) {}

  /** Called after any change (the routing table and the certificates follow domains). */
  onChange(listener: Listener): void {
    this.listeners.add(listener);
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }

  all(): DomainRow[] {
    return this.db.prepare('SELECT * FROM app_domains ORDER BY fqdn').all() as DomainRow[];
  }

  ofApp(appId: string): DomainRow[] {
    return this.db.prepare('SELECT * FROM app_domains WHERE app_id = ? ORDER BY fqdn').all(appId) as DomainRow[];
  }

  byName(fqdn: string): DomainRow | undefined {
    return this.db.prepare('SELECT * FROM app_domains WHERE fqdn = ?').get(fqdn) as DomainRow | undefined;
  }

  /**
   * Adds a domain to an application. A domain held by another application is refused without
   * saying which: the other application may belong to anyone on the platform.
   */
  add(appId: string, fqdn: string, options: { pendingVerification?: boolean } = {}): DomainRow {
    const now = new Date().toISOString();
    const row: DomainRow = {
      fqdn,
      app_id: appId,
      favourite: 0,
      created_at: now,
      verification_token: verificationToken(appId, fqdn),
      verified_at: options.pendingVerification ? null : now,
    };
    const inserted = this.db.transaction(() => {
      // A name waiting for its proof holds nothing against a new claim that will wait too:
      // whoever controls its DNS proves it. Otherwise a tenant could block a name by adding it.
      const held = this.byName(fqdn);
      if (options.pendingVerification && held && held.app_id !== appId && held.verified_at === null) {
        this.db.prepare('DELETE FROM app_domains WHERE fqdn = ? AND verified_at IS NULL').run(fqdn);
      }
      return this.db
        .prepare(
          `INSERT INTO app_domains (fqdn, app_id, favourite, created_at, verification_token, verified_at)
           VALUES (@fqdn, @app_id, @favourite, @created_at, @verification_token, @verified_at) ON CONFLICT (fqdn) DO NOTHING`,
        )
        .run(row);
    })();
    if (inserted.changes === 0) {
      if (this.byName(fqdn)?.app_id === appId) {
        throw new ConflictError(`${fqdn} is already a domain of this application.`, 'See its domains with `slipway domain`.');
      }
      throw new ConflictError(
        `${fqdn} is already in use on this platform.`,
        'A domain serves one application. If the name is yours, remove it from the application that has it first (`slipway domain rm`), or ask the platform operator.',
      );
    }
    this.changed();
    return row;
  }

  /** Domains waiting for their DNS proof. */
  pendingVerification(): DomainRow[] {
    return this.db.prepare('SELECT * FROM app_domains WHERE verified_at IS NULL ORDER BY fqdn').all() as DomainRow[];
  }

  /** Records the proof of a domain by its token; false when it was verified already, is gone or was claimed by another app meanwhile. */
  markVerified(fqdn: string, token: string): boolean {
    const done = this.db
      .prepare('UPDATE app_domains SET verified_at = ? WHERE fqdn = ? AND verification_token = ? AND verified_at IS NULL')
      .run(new Date().toISOString(), fqdn, token);
    if (done.changes > 0) this.changed();
    return done.changes > 0;
  }

  /** Without required verification nothing waits: what waited is taken as verified. */
  verifyAllPending(): number {
    const done = this.db.prepare('UPDATE app_domains SET verified_at = ? WHERE verified_at IS NULL').run(new Date().toISOString());
    if (done.changes > 0) this.changed();
    return done.changes;
  }

  remove(appId: string, fqdn: string): void {
    const removed = this.db.prepare('DELETE FROM app_domains WHERE fqdn = ? AND app_id = ?').run(fqdn, appId);
    if (removed.changes === 0) throw notADomainOf(fqdn);
    this.changed();
  }

  /** Makes one of the application's domains the one the CLI and console print. */
  setFavourite(appId: string, fqdn: string): void {
    if (this.byName(fqdn)?.app_id !== appId) throw notADomainOf(fqdn);
    this.db.transaction(() => {
      this.db.prepare('UPDATE app_domains SET favourite = 0 WHERE app_id = ?').run(appId);
      this.db.prepare('UPDATE app_domains SET favourite = 1 WHERE fqdn = ?').run(fqdn);
    })();
    this.changed();
  }

  clearFavourite(appId: string): void {
    this.db.prepare('UPDATE app_domains SET favourite = 0 WHERE app_id = ?').run(appId);
    this.changed();
  }

  favourite(appId: string): string | undefined {
    return (this.db.prepare('SELECT fqdn FROM app_domains WHERE app_id = ? AND favourite = 1').get(appId) as { fqdn: string } | undefined)
      ?.fqdn;
  }
}

/**
 * The token that proves a domain for an application: the same each time the application adds
 * the name (a record already published still counts after a re-add), another for any other
 * application. It need not be secret: only who controls the name's DNS can publish it.
 */
function verificationToken(appId: string, fqdn: string): string {
  return `slipway-verify-${createHash('sha256').update(`${appId}\n${fqdn}`).digest('base64url').slice(0, 32)}`;
}

function notADomainOf(fqdn: string): NotFoundError {
  return new NotFoundError(`${fqdn} is not a domain of this application.`, 'List its domains with `slipway domain`.');
}
