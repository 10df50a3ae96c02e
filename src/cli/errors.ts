/** Wrong use of the command line: exit code 2 with the usage line. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly usage?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A failure the user can act on: exit code 1, message then hint. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly hint?: string | null,
    /** The API's error code (`not_found`…), when the daemon refused a request. */
    readonly code?: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
