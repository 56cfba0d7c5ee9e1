import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * The operator's token is kept in the session row sealed (AES-256-GCM, a key derived from the session secret): the
 * sessions table, a database dump or a backup alone never reveal an admin token. Opened per request, in memory only.
 */
export class TokenVault {
  private readonly key: Buffer;

  constructor(sessionSecret: string) {
    this.key = createHash('sha256').update('console token vault\0').update(sessionSecret).digest();
  }

  seal(token: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const sealed = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
    return [iv, cipher.getAuthTag(), sealed].map((part) => part.toString('base64url')).join('.');
  }

  /** The token, or undefined when the value was not sealed with this secret (a changed secret, a forged row). */
  open(value: string): string | undefined {
    const [iv, tag, sealed] = value.split('.').map((part) => Buffer.from(part, 'base64url'));
    if (!iv || !tag || !sealed || iv.length !== 12 || tag.length !== 16) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(sealed), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}
