/** Ids come from the platform; these are all they may look like before we use them. */
const INSTANCE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;

/** Checks an instance id before it names a sandbox or a record file. */
export function validateInstanceId(id: string): string {
  if (typeof id !== 'string' || !INSTANCE_ID.test(id)) {
    throw new Error(
      `Invalid instance id ${JSON.stringify(String(id).slice(0, 80))}: expected 1 to 200 letters, digits, '.', '_', ':' or '-', starting with a letter or digit.`,
    );
  }
  return id;
}
