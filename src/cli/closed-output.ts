/**
 * A reader that stops early (`slipway status | head -5`) closes the pipe, and the next write fails
 * with EPIPE; unhandled, Node prints a stack trace. Like other Unix tools the command then ends
 * quietly: the reader has what it wanted, and nothing on slipway's side went wrong, so the exit
 * status is success. Any other write error is still raised.
 */
export function endQuietlyWhenReaderCloses(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}
