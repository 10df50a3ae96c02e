/**
 * The settings of one add-on's own PostgreSQL server, derived from its plan (plan-limits.ts),
 * so that the server fits in the memory its control group allows with every connection busy:
 *
 *   shared_buffers        1/8 of the memory (PostgreSQL's advice is 1/4 of a machine's; the
 *                         server shares its group with its backends' private memory)
 *   max_connections       the role's connection limit + 3 reserved for slipway's superuser
 *                         (backups, size checks, restores) + 2 spare
 *   work_mem              1/4 of the memory shared by the connections (a query may use it a few
 *                         times over; the group's limit is what finally holds)
 *   maintenance_work_mem  1/16 of the memory (VACUUM, CREATE INDEX)
 *   effective_cache_size  1/2 of the memory (a planner hint only)
 *
 * Background processes are kept few (one autovacuum worker, no parallel workers), which keeps
 * an idle server small: its processes share most of their pages.
 */
import type { PostgresqlPlanLimits } from '../plan-limits.js';

const KiB = 1024;
const MiB = 1024 * KiB;

export const SUPERUSER_RESERVED_CONNECTIONS = 3;

export interface ServerSizing {
  sharedBuffersKb: number;
  maxConnections: number;
  workMemKb: number;
  maintenanceWorkMemKb: number;
  effectiveCacheSizeKb: number;
}

export function serverSizing(plan: PostgresqlPlanLimits): ServerSizing {
  const memoryKb = Math.floor(plan.memoryBytes / KiB);
  const maxConnections = plan.connectionLimit + SUPERUSER_RESERVED_CONNECTIONS + 2;
  return {
    // 128 kB is PostgreSQL's own floor; a 64 MiB plan gets 8 MiB.
    sharedBuffersKb: Math.max(128, Math.floor(memoryKb / 8)),
    maxConnections,
    workMemKb: Math.max(64, Math.floor(memoryKb / 4 / maxConnections)),
    maintenanceWorkMemKb: Math.max(1024, Math.floor(memoryKb / 16)),
    effectiveCacheSizeKb: Math.max(8, Math.floor(memoryKb / 2)),
  };
}

/** `-c` settings for the server's command line. */
export function serverSettings(plan: PostgresqlPlanLimits): string[] {
  const s = serverSizing(plan);
  return [
    `shared_buffers=${s.sharedBuffersKb}kB`,
    `max_connections=${s.maxConnections}`,
    `superuser_reserved_connections=${SUPERUSER_RESERVED_CONNECTIONS}`,
    `work_mem=${s.workMemKb}kB`,
    `maintenance_work_mem=${s.maintenanceWorkMemKb}kB`,
    `effective_cache_size=${s.effectiveCacheSizeKb}kB`,
    // In a memory-limited group: huge pages would need a reservation the group does not see.
    'huge_pages=off',
    'autovacuum_max_workers=1',
    'max_worker_processes=2',
    'max_parallel_workers=0',
    'max_parallel_workers_per_gather=0',
    'max_parallel_maintenance_workers=0',
    // Base backups and nothing else stream from it.
    'max_wal_senders=2',
    'max_replication_slots=0',
    // A server of its own per tenant: what it logs is the tenant's, kept short.
    'log_min_messages=warning',
  ];
}

/** One line for `slipway addon providers`: the settings that follow from the plan. */
export function describeServerSizing(plan: PostgresqlPlanLimits): string {
  const s = serverSizing(plan);
  const size = (kb: number) => (kb >= MiB / KiB ? `${Math.round(kb / 1024)} MiB` : `${kb} kB`);
  return `shared_buffers ${size(s.sharedBuffersKb)}, max_connections ${s.maxConnections}, work_mem ${size(s.workMemKb)}, maintenance_work_mem ${size(s.maintenanceWorkMemKb)}`;
}
