/** A backup as the API describes it (GET /v1/addons/:addon/backups). */
export interface BackupSummary {
  id: string;
  addon_id: string;
  kind: 'scheduled' | 'manual' | 'safety';
  created_at: string;
  finished_at: string;
  size_bytes: number;
  verification: 'pending' | 'verified' | 'failed';
  verification_detail: string;
  verified_at: string | null;
  counts: Record<string, number>;
}

/** 1536 → "1.5 KiB": sizes people read at a glance. */
export function humanSize(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}
