import type { Db } from './database.js';
import type { AddonRow } from './addons.js';
import type { AppRow } from './apps.js';

/**
 * Service links: an app linked to an add-on receives the add-on's variables; an app linked
 * to another app (its target) receives the target's exposed configuration.
 * Lists come in link order, which is also the order their variables are merged in.
 */
export class LinkRepository {
  private readonly addonLinkListeners = new Set<() => void>();

  constructor(private readonly db: Db) {}

  /** Called after a link between an app and an add-on was made or removed (the firewall follows). */
  onAddonLinksChanged(listener: () => void): () => void {
    this.addonLinkListeners.add(listener);
    return () => this.addonLinkListeners.delete(listener);
  }

  private addonLinksChanged(changed: boolean): boolean {
    if (changed) for (const listener of this.addonLinkListeners) listener();
    return changed;
  }

  /** Returns false when the link already existed. */
  linkAddon(appId: string, addonId: string): boolean {
    return this.addonLinksChanged(
      this.db
        .prepare('INSERT INTO addon_links (app_id, addon_id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING')
        .run(appId, addonId, new Date().toISOString()).changes > 0,
    );
  }

  unlinkAddon(appId: string, addonId: string): boolean {
    return this.addonLinksChanged(
      this.db.prepare('DELETE FROM addon_links WHERE app_id = ? AND addon_id = ?').run(appId, addonId).changes > 0,
    );
  }

  /** Add-ons linked to an app. */
  addonsOf(appId: string): AddonRow[] {
    return this.db
      .prepare('SELECT a.* FROM addons a JOIN addon_links l ON l.addon_id = a.id WHERE l.app_id = ? ORDER BY l.rowid')
      .all(appId) as AddonRow[];
  }

  /** Ids of the apps linked to an add-on. */
  appsOfAddon(addonId: string): string[] {
    return (
      this.db.prepare('SELECT app_id FROM addon_links WHERE addon_id = ? ORDER BY rowid').all(addonId) as Array<{ app_id: string }>
    ).map((r) => r.app_id);
  }

  unlinkAllOfAddon(addonId: string): number {
    const changes = this.db.prepare('DELETE FROM addon_links WHERE addon_id = ?').run(addonId).changes;
    this.addonLinksChanged(changes > 0);
    return changes;
  }

  linkApp(appId: string, targetAppId: string): boolean {
    return (
      this.db
        .prepare('INSERT INTO app_links (app_id, target_app_id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING')
        .run(appId, targetAppId, new Date().toISOString()).changes > 0
    );
  }

  unlinkApp(appId: string, targetAppId: string): boolean {
    return this.db.prepare('DELETE FROM app_links WHERE app_id = ? AND target_app_id = ?').run(appId, targetAppId).changes > 0;
  }

  /** Apps whose exposed configuration this app receives. */
  targetsOf(appId: string): AppRow[] {
    return this.db
      .prepare('SELECT a.* FROM apps a JOIN app_links l ON l.target_app_id = a.id WHERE l.app_id = ? ORDER BY l.rowid')
      .all(appId) as AppRow[];
  }

  /** Apps that receive this app's exposed configuration. */
  consumersOf(targetAppId: string): AppRow[] {
    return this.db
      .prepare('SELECT a.* FROM apps a JOIN app_links l ON l.app_id = a.id WHERE l.target_app_id = ? ORDER BY l.rowid')
      .all(targetAppId) as AppRow[];
  }
}
