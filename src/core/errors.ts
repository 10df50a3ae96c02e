/**
 * A failure the user can fix: the message says what happened and what was seen, the hint what
 * to do next. Every error meant for a user extends it, so whoever reports one (the API, the
 * deploy log, the CLI) finds the hint in one place.
 */
export class FixableError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * Errors the user can act on through the API. Each carries an HTTP status, a message saying
 * what was wrong and a hint saying what to do next.
 */
export class SlipwayError extends FixableError {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    hint?: string,
  ) {
    super(message, hint);
  }
}

/**
 * A build that cannot be planned or prepared as the project stands (a file, a variable, a
 * version): thrown by providers and toolchains, reported in the deploy log's build phase.
 */
export class PlanError extends FixableError {}

export class ValidationError extends SlipwayError {
  constructor(message: string, hint?: string) {
    super(400, 'invalid', message, hint);
  }
}

export class NotFoundError extends SlipwayError {
  constructor(message: string, hint?: string) {
    super(404, 'not_found', message, hint);
  }
}

export class ConflictError extends SlipwayError {
  constructor(message: string, hint?: string) {
    super(409, 'conflict', message, hint);
  }
}

export class UnauthorizedError extends SlipwayError {
  constructor(
    message = 'Missing or invalid API token.',
    hint = 'Run `slipway login --url <api-url> --token <token>` or set SLIPWAY_TOKEN.',
  ) {
    super(401, 'unauthorized', message, hint);
  }
}

export class ForbiddenError extends SlipwayError {
  constructor(message: string, hint?: string) {
    super(403, 'forbidden', message, hint);
  }
}
