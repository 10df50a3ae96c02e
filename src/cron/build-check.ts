import type { Owner } from '../sandbox/untrusted-tree.js';
import { repositoryTree } from '../sandbox/untrusted-tree.js';
import { CRON_FILE, readCronJobs, type CronJobSpec } from './cron-file.js';

/**
 * The build's look at `clevercloud/cron.json` (docs/behaviour.md, Cron jobs): the jobs the
 * release will carry, printed in the deploy log; a file that is not valid fails the build with
 * its line and reason (a PlanError, which the deployer reports with its hint).
 */
export async function cronJobsOfBuild(buildDir: string, owner: Owner, log: (line: string) => void): Promise<CronJobSpec[]> {
  const jobs = await readCronJobs(repositoryTree(buildDir, owner));
  if (jobs.length > 0) {
    log(`==> [build] ${jobs.length} cron job(s) from ${CRON_FILE}, run once per schedule for the app (times in UTC):`);
    for (const job of jobs) log(`    ${job.name} (line ${job.line}): ${job.schedule} ${job.command}`);
  }
  return jobs;
}
