/**
 * Reads a stream of NDJSON text as it arrives: a chunk may end in the middle of a record, so
 * what follows the last newline waits for the next chunk. The API's log streams use it (the
 * CLI's `logs`, the console's live logs).
 */
export class NdjsonReader<T> {
  private buffer = '';

  /** Adds a chunk of text; returns the whole records it completed, in order (blank lines skipped). */
  push(text: string): T[] {
    this.buffer += text;
    const records: T[] = [];
    let newline: number;
    while ((newline = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + 1);
      if (line.trim()) records.push(JSON.parse(line) as T);
    }
    return records;
  }

  /** What the stream ended with, when it did not end with a newline. */
  rest(): T[] {
    const line = this.buffer;
    this.buffer = '';
    return line.trim() ? [JSON.parse(line) as T] : [];
  }
}
