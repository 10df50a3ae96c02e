import { PlanError } from '../plan.js';

export const DEFAULT_GOAL = 'stage';

/**
 * One sbt command per word, as `sbt <SBT_DEPLOY_GOAL>` would split it in a shell: `clean stage`
 * runs two commands. Each word is a task or command name with an optional project or config
 * axis (`web/stage`, `Universal/stage`, `project web`, `++2.13.18`). Quotes, `$`, `;`, `@`,
 * redirections and the like are refused rather than interpreted: no shell is involved, and
 * a leading `-` or `@` would be read by the launcher as an option or a properties file.
 */
const GOAL_WORD = /^[A-Za-z0-9_+][A-Za-z0-9_./:+=,-]*$/;
const MAX_GOAL_LENGTH = 500;

export interface DeployGoal {
  goals: string[];
  source: 'default' | 'SBT_DEPLOY_GOAL';
}

export function parseDeployGoal(value: string | undefined): DeployGoal {
  if (value === undefined || value.trim() === '') return { goals: [DEFAULT_GOAL], source: 'default' };
  const words = value.trim().split(/[ \t]+/);
  const bad = words.find((w) => !GOAL_WORD.test(w));
  if (value.length > MAX_GOAL_LENGTH || bad !== undefined || /[\r\n]/.test(value)) {
    throw new PlanError(
      `SBT_DEPLOY_GOAL=${JSON.stringify(value)} is not a list of sbt goals` +
        (bad !== undefined ? ` (refused: ${JSON.stringify(bad)}).` : '.'),
      'Give sbt task or command names separated by spaces, such as "stage", "web/stage" or "clean web/stage": ' +
        'letters, digits and _ . / : + = , - only (no quotes, $, ;, @ or shell operators, and no leading -).',
    );
  }
  return { goals: words, source: 'SBT_DEPLOY_GOAL' };
}
