import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Store } from '../store/store.js';
import { BackupSchedules, DEFAULT_SCHEDULE, MAX_KEEP_DAYS, checkKeepDays, checkTimeOfDay, scheduledToday } from './schedule.js';

test('times of day are HH:MM on a 24-hour clock', () => {
  assert.equal(checkTimeOfDay('03:00'), '03:00');
  assert.equal(checkTimeOfDay('23:59'), '23:59');
  for (const bad of ['3:00', '24:00', '12:60', '12h30', '', '03:00:00']) {
    assert.throws(
      () => checkTimeOfDay(bad, '--backup-at'),
      new RegExp(`--backup-at ${JSON.stringify(bad).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not a time of day`),
    );
  }
});

test('backups are kept a whole number of days, at least one and at most 90', () => {
  assert.equal(checkKeepDays(7), 7);
  assert.equal(checkKeepDays(90), 90);
  for (const bad of [0, -1, 1.5, Number.NaN, 91, 3650]) assert.throws(() => checkKeepDays(bad), /between 1 and 90 days/);
});

test('a schedule stored before the bound keeps at most 90 days', () => {
  const store = Store.open(':memory:');
  const org = store.orgs.create('acme');
  const addon = store.addons.create({ orgId: org.id, provider: 'redis', name: 'cache' });
  store.addonBackups.setSchedule({ addon_id: addon.id, at: '03:00', keep_days: 3650 });
  assert.equal(new BackupSchedules(store, DEFAULT_SCHEDULE).of(addon.id).keep_days, MAX_KEEP_DAYS);
  store.close();
});

test("today's slot is the given time on the same local day", () => {
  const now = new Date(2026, 10, 26, 15, 20, 7);
  const slot = scheduledToday('03:30', now);
  assert.deepEqual(
    [slot.getFullYear(), slot.getMonth(), slot.getDate(), slot.getHours(), slot.getMinutes(), slot.getSeconds()],
    [2026, 10, 26, 3, 30, 0],
  );
});
