/**
 * A build plan as readable lines, for the deploy log and the `slipway plan` command.
 * Secret files appear by path only; nothing else in a plan holds a secret (plan.ts).
 */
import type { BuildPlan, PlanCommand } from './plan.js';

function quoteArg(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** argv shown as a copyable command line (display only: commands always run as argv). */
export function formatArgv(argv: readonly string[]): string {
  return argv.map(quoteArg).join(' ');
}

function formatCommand(command: PlanCommand): string {
  // The user's own words read better than slipway's wrapper; the exact argv is in the JSON plan.
  if (command.written) return `${command.written.command}  (${command.written.source})`;
  const extras: string[] = [];
  if (command.cwd) extras.push(`in ${command.cwd}`);
  if (command.env && Object.keys(command.env).length > 0) {
    extras.push(
      Object.entries(command.env)
        .map(([k, v]) => `${k}=${quoteArg(v)}`)
        .join(' '),
    );
  }
  return `${command.label}: ${formatArgv(command.argv)}${extras.length > 0 ? `  [${extras.join('; ')}]` : ''}`;
}

export function describePlan(plan: BuildPlan): string[] {
  const lines: string[] = [`Build plan (${plan.provider})`];
  lines.push('  Toolchain:');
  for (const tool of plan.toolchain) lines.push(`    ${tool.name} ${tool.version}  (${tool.reason})`);
  if (Object.keys(plan.env).length > 0) {
    lines.push('  Environment added:');
    for (const [name, value] of Object.entries(plan.env)) lines.push(`    ${name}=${value}`);
  }
  if (plan.files.length > 0) {
    lines.push('  Files written before the build:');
    for (const file of plan.files)
      lines.push(`    ${file.path}${file.secret ? ' (secret: content not shown, removed before the app starts)' : ''}`);
  }
  lines.push('  Build:');
  if (plan.build.length === 0) lines.push('    (nothing to run)');
  for (const command of plan.build) lines.push(`    ${formatCommand(command)}`);
  if (plan.beforeStart.length > 0) {
    lines.push('  Before start:');
    for (const command of plan.beforeStart) lines.push(`    ${formatCommand(command)}`);
  }
  lines.push(`  Start: ${formatCommand(plan.start)}`);
  if (plan.cacheDirs.length > 0) lines.push(`  Kept between builds: ${plan.cacheDirs.join(', ')}`);
  if (plan.notes.length > 0) {
    lines.push('  Why:');
    for (const note of plan.notes) lines.push(`    - ${note}`);
  }
  if (plan.warnings.length > 0) {
    lines.push('  Warnings:');
    for (const warning of plan.warnings) lines.push(`    ! ${warning}`);
  }
  return lines;
}
