/**
 * Repository hygiene (docs/behaviour.md, Project files: .gitignore must mention /node_modules): warnings that say
 * what to change. Never fatal.
 */

/** True when a .gitignore line ignores the top-level node_modules folder. */
export function gitignoreCoversNodeModules(gitignore: string): boolean {
  let covered = false;
  for (const raw of gitignore.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (/^!\/?(\*\*\/)?node_modules\/?$/.test(line)) covered = false;
    else if (/^\/?(\*\*\/)?node_modules(\/|\/\*\*?)?$/.test(line)) covered = true;
  }
  return covered;
}

export interface HygieneInput {
  gitignore?: string;
  nodeModulesCommitted: boolean;
}

export function hygieneWarnings(input: HygieneInput): string[] {
  const warnings: string[] = [];
  if (input.nodeModulesCommitted) {
    warnings.push(
      'node_modules is committed: the build installs dependencies itself, and committed modules can hold binaries built for another machine. ' +
        'Remove it from git with `git rm -r --cached node_modules`, add the line /node_modules to .gitignore, commit and push.',
    );
  }
  if (input.gitignore === undefined) {
    warnings.push('There is no .gitignore: create one with the line /node_modules so installed dependencies are never committed.');
  } else if (!gitignoreCoversNodeModules(input.gitignore)) {
    warnings.push('.gitignore does not mention /node_modules: add the line /node_modules so installed dependencies are never committed.');
  }
  return warnings;
}
