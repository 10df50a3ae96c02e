/**
 * Errors the user can act on. Each carries an HTTP status for the API, a message saying
 * what was wrong and a hint saying what to do next.
 */
export class SlipwayError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

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
  constructor(message = 'Missing or invalid API token.', hint = 'Run `slipway login --url <api-url> --token <token>` or set SLIPWAY_TOKEN.') {
    super(401, 'unauthorized', message, hint);
  }
}

export class ForbiddenError extends SlipwayError {
  constructor(message: string, hint?: string) {
    super(403, 'forbidden', message, hint);
  }
}
