import { ApiError, enc, type Addon } from '../api.js';
import type { AddonBackupView, AddonBackupsView } from '../../../shared/api-types.js';
import { humanSize } from '../../../shared/human-size.js';
import { formatTime, h, replaceChildren, uniqueId } from '../dom.js';
import { every, type ViewContext } from '../view.js';

// A restore test takes seconds to minutes: a refresh every few seconds shows it end.
const REFRESH_MS = 5000;
const BADGE: Record<AddonBackupView['verification'], string> = {
  pending: 'state-wip',
  verified: 'state-ok',
  failed: 'state-failed',
};
const STATE: Record<AddonBackupView['verification'], string> = {
  pending: 'restore test pending',
  verified: 'verified',
  failed: 'failed',
};

function windowText(list: AddonBackupsView): string {
  // PostgreSQL restores to any second of its window; Redis (no window) to one of its snapshots.
  const usable = list.backups.some((b) => b.verification !== 'failed');
  const window = list.window
    ? `Restorable to any second from ${formatTime(list.window.from)} to now.`
    : usable
      ? 'Restorable to one of the backups below.'
      : 'Not restorable yet: no backup that passed or awaits its restore test.';
  return `${window} Daily backup at ${list.schedule.at}, kept ${list.schedule.keep_days} days.`;
}

/** One backup: its figures on a row, what its restore test found on a full-width row below. */
function backupRows(backup: AddonBackupView): HTMLTableSectionElement {
  return h(
    'tbody',
    { class: `backup-${backup.verification}`, 'data-backup': backup.id, 'data-verification': backup.verification },
    h(
      'tr',
      {},
      h('th', { scope: 'row' }, formatTime(backup.created_at), h('br', {}), h('code', { class: 'meta' }, backup.id)),
      h('td', {}, humanSize(backup.size_bytes)),
      h('td', {}, backup.kind),
      h('td', {}, h('span', { class: `badge ${BADGE[backup.verification]}` }, STATE[backup.verification])),
    ),
    h(
      'tr',
      { class: 'backup-detail' },
      h(
        'td',
        { colspan: 4 },
        backup.verification === 'pending'
          ? 'Restore test: not done yet.'
          : `Restore test${backup.verified_at ? ` (${formatTime(backup.verified_at)})` : ''}: ${backup.verification_detail}`,
      ),
    ),
  );
}

/**
 * An add-on's backups as `slipway addon backups` lists them (time, size, kind, verification and
 * what the restore test found), failed ones first and marked, the restore window, and a button
 * that takes one now. It follows the restore tests while the page is open.
 */
export function backupsSection(ctx: ViewContext, addon: Addon): HTMLElement {
  const titleId = uniqueId('backups-title');
  const head = h('thead', {}, h('tr', {}, ...['Taken', 'Size', 'Kind', 'Verification'].map((t) => h('th', { scope: 'col' }, t))));
  const table = h('table', { class: 'backups', 'aria-labelledby': titleId }, head);
  const tableBox = h('div', { class: 'table-scroll', hidden: true }, table);
  const failures = h('p', { class: 'form-error backup-failures', role: 'alert', hidden: true });
  const note = h('p', { class: 'meta backup-window' });
  const button = h('button', { type: 'button', class: 'secondary', 'aria-label': `Back up now: ${addon.name}` }, 'Back up now');
  const outcome = h('div', { class: 'outcome', role: 'status', 'aria-live': 'polite', hidden: true });
  let unavailable = false;

  const draw = (list: AddonBackupsView) => {
    const failed = list.backups.filter((b) => b.verification === 'failed').length;
    const failText = failed
      ? `${failed === 1 ? '1 backup' : `${failed} backups`} of ${addon.name} failed ${failed === 1 ? 'its' : 'their'} restore test: ` +
        'not restorable, see below.'
      : '';
    // Set only when it changes, so screen readers hear the alert once, not every refresh.
    if (failures.textContent !== failText) failures.textContent = failText;
    failures.hidden = failed === 0;
    note.textContent = list.backups.length ? windowText(list) : `No backup yet. ${windowText(list)}`;
    tableBox.hidden = list.backups.length === 0;
    replaceChildren(table, head, ...list.backups.map(backupRows));
  };
  const refresh = async () => {
    if (unavailable) return;
    try {
      const list = await ctx.api.get<AddonBackupsView>(`/v1/addons/${enc(addon.id)}/backups`);
      if (!ctx.signal.aborted) draw(list);
    } catch (error) {
      if (ctx.signal.aborted) return;
      // This kind of add-on (or this platform) keeps no backups: say so once, offer nothing.
      unavailable = error instanceof ApiError && error.status === 501;
      button.hidden = unavailable;
      note.textContent = unavailable ? (error as Error).message : `The backups could not be read: ${(error as Error).message}`;
    }
  };

  button.addEventListener('click', async () => {
    button.disabled = true;
    button.textContent = 'Backing up…';
    outcome.hidden = false;
    outcome.dataset.kind = 'busy';
    replaceChildren(outcome, h('p', {}, `Taking a backup of ${addon.name}…`));
    try {
      const { backup } = await ctx.api.json<{ backup: AddonBackupView }>('POST', `/v1/addons/${enc(addon.id)}/backups`);
      if (ctx.signal.aborted) return;
      outcome.dataset.kind = 'ok';
      replaceChildren(
        outcome,
        h('p', {}, 'Backup ', h('code', {}, backup.id), ` stored (${humanSize(backup.size_bytes)}); its restore test runs now.`),
      );
      ctx.announce(`Backup of ${addon.name} stored; its restore test runs now.`);
      await refresh();
    } catch (error) {
      if (ctx.signal.aborted) return;
      const hint = error instanceof ApiError ? error.hint : null;
      outcome.dataset.kind = 'error';
      replaceChildren(
        outcome,
        h('p', {}, `The backup of ${addon.name} failed: ${(error as Error).message}`),
        hint ? h('p', { class: 'hint' }, hint) : null,
      );
      ctx.announce(`The backup of ${addon.name} failed.`);
    } finally {
      button.disabled = false;
      button.textContent = 'Back up now';
    }
  });

  void refresh();
  every(REFRESH_MS, ctx.signal, refresh);
  return h(
    'section',
    { class: 'addon-backups', 'aria-labelledby': titleId },
    h('div', { class: 'section-head' }, h('h3', { id: titleId }, 'Backups'), button),
    failures,
    note,
    tableBox,
    outcome,
  );
}
