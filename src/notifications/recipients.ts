import type { Store } from '../store/store.js';
import type { PlatformEvent } from '../core/platform-events.js';

/**
 * The addresses one e-mail notification reaches for one event: addresses as given, `user` the
 * person who caused the event (when one did), `ORGANISATION` every member of the app's
 * organisation, a user's id or name that user; users without an address are left out.
 */
export function recipientsOf(store: Store, targets: string[], event: PlatformEvent, orgId: string): string[] {
  const addresses = new Set<string>();
  const ofUser = (userId: string | undefined) => {
    const address = userId ? store.notifyEmails.addressOf(userId) : undefined;
    if (address) addresses.add(address);
  };
  for (const target of targets) {
    if (target.includes('@')) addresses.add(target);
    else if (target === 'user') ofUser(typeof event.details.user_id === 'string' ? event.details.user_id : undefined);
    else if (target === 'ORGANISATION') for (const member of store.orgs.members(orgId)) ofUser(member.user_id);
    else ofUser((store.users.byId(target) ?? store.users.byName(target))?.id);
  }
  return [...addresses];
}
