/**
 * What UntrustedTree (./untrusted-tree.ts) says when it will not touch a path: a PlanError
 * naming the path relative to the tree's root and what to do about it. Messages never quote what
 * was read, nor where a link points: the daemon read it with root's rights. Kept in one place so
 * that every refusal of every tree reads alike and ends with the same next step.
 */
import { PlanError } from '../core/errors.js';
import { humanSize } from '../shared/human-size.js';
import { components, type EntryKind, MAX_LINKS, type WalkRefusals } from './tree-walk.js';

/** A path of an untrusted tree the daemon will not touch, with what to do about it. */
export class RefusedPathError extends PlanError {
  constructor(message: string, hint: string) {
    super(message, hint);
    this.name = 'RefusedPathError';
  }
}

const KIND_TEXT: Record<EntryKind, string> = {
  file: 'a file',
  folder: 'a folder',
  symlink: 'a symbolic link',
  fifo: 'a named pipe (fifo)',
  socket: 'a socket',
  device: 'a device file',
};

export class TreeRefusals implements WalkRefusals {
  constructor(
    /** How messages name the tree: "the repository", "the build folder", ... */
    private readonly name: string,
    /** Ends every hint: what the user does once the tree is fixed (default: push again). */
    private readonly step: string | undefined,
  ) {}

  absolutePath(rel: string): RefusedPathError {
    return this.refuse(`${rel} is an absolute path, not a path inside ${this.name}`, `Use a relative path, ${this.nextStep()}.`);
  }

  linkLoop(shown: string, asked: string): RefusedPathError {
    return this.refuse(
      `${this.where(shown, asked)} is a symbolic link that loops (more than ${MAX_LINKS} links on the way)`,
      `Replace the links by the files themselves, ${this.nextStep()}.`,
    );
  }

  absoluteLink(shown: string, asked: string): RefusedPathError {
    return this.refuse(
      `${this.where(shown, asked)} is a symbolic link to an absolute path, which slipway does not follow in ${this.name}`,
      `Commit the file itself instead of a link (a link may only point inside ${this.name}, by a relative path), ${this.nextStep()}.`,
    );
  }

  outside(link: string | undefined, rel: string): RefusedPathError {
    if (link === undefined) {
      return this.refuse(`${rel} leads outside ${this.name}`, `Use a path inside ${this.name}, without "..", ${this.nextStep()}.`);
    }
    return this.refuse(
      `${this.where(link, rel)} is a symbolic link to a path outside ${this.name}`,
      `Commit the file itself instead of a link (a link may only point inside ${this.name}), ${this.nextStep()}.`,
    );
  }

  /** O_NOFOLLOW met a link that was not there at the walk: refused rather than guessed. */
  changedIntoLink(shown: string, rel: string): RefusedPathError {
    return this.refuse(`${this.where(shown, rel)} changed into a symbolic link while slipway read it`, 'Push again.');
  }

  tooLarge(shown: string, rel: string, maxBytes: number): RefusedPathError {
    return this.refuse(
      `${this.where(shown, rel)} is larger than ${humanSize(maxBytes)}, more than slipway reads from ${this.name}`,
      `Make ${shown} smaller than ${humanSize(maxBytes)}, ${this.nextStep()}.`,
    );
  }

  notAFile(shown: string, rel: string, kind: EntryKind): RefusedPathError {
    return this.refuse(
      `${this.where(shown, rel)} is ${KIND_TEXT[kind]} in ${this.name}, where slipway expects a regular file`,
      `Make ${shown} a regular file (or remove it), ${this.nextStep()}.`,
    );
  }

  notAFolder(shown: string, rel: string, kind: EntryKind): RefusedPathError {
    return this.refuse(
      `${this.where(shown, rel)} is ${KIND_TEXT[kind]} in ${this.name}, where slipway needs a folder`,
      `Remove ${shown} or make it a folder, ${this.nextStep()}.`,
    );
  }

  folderWhereFileGoes(shown: string): RefusedPathError {
    return this.refuse(
      `${shown} is a folder in ${this.name}, where slipway writes a file it generates`,
      `Remove the folder ${shown} (slipway writes this file itself), ${this.nextStep()}.`,
    );
  }

  cannotMake(rel: string): RefusedPathError {
    return this.refuse(`${rel} could not be made in ${this.name}`, `Remove what stands at ${rel}, ${this.nextStep()}.`);
  }

  private nextStep(): string {
    return this.step ?? 'then push again';
  }

  /** `config` or `config (on the way to config/app.json)`. */
  private where(shown: string, rel: string): string {
    const asked = components(rel).join('/');
    return shown === asked || asked === '' ? shown : `${shown} (on the way to ${asked})`;
  }

  private refuse(message: string, hint: string): RefusedPathError {
    return new RefusedPathError(`${message}.`, hint);
  }
}
