import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';

/**
 * A SCRAM-SHA-256 verifier in the form PostgreSQL stores (RFC 5802/7677). Giving the server
 * the verifier instead of the password keeps the plaintext out of statements, and so out of
 * the server log should a statement ever be logged.
 */
export function scramSha256Verifier(password: string, salt = randomBytes(16), iterations = 4096): string {
  const salted = pbkdf2Sync(password.normalize('NFKC'), salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}
