import { PetStatus } from '@app/contract';
import { PageCursorCodec } from './page-cursor';

const codec = new PageCursorCodec('a-test-secret-of-at-least-32-characters');

/** Flips one bit of the decoded bytes at `index` and re-encodes: an edit that keeps the token well-formed. */
function flipped(token: string, index: number): string {
  const bytes = Buffer.from(token, 'base64url');
  bytes[index] ^= 0x01;
  return bytes.toString('base64url');
}

describe('PageCursorCodec', () => {
  it.each([
    [{ lastId: 1, status: null }],
    [{ lastId: 900_000, status: PetStatus.Sold }],
    [{ lastId: Number.MAX_SAFE_INTEGER, status: PetStatus.Available }],
  ])('reads back what it wrote: %j', (position) => {
    const token = codec.encode(position);
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(codec.decode(token)).toEqual(position);
  });

  it('does not show the id in clear base64url of the whole token (opaque: a MAC comes first)', () => {
    const token = codec.encode({ lastId: 42, status: null });
    expect(token.startsWith(Buffer.from('42').toString('base64url'))).toBe(false);
  });

  it('refuses every single-bit edit, wherever it is', () => {
    const token = codec.encode({ lastId: 123_456, status: PetStatus.Pending });
    const length = Buffer.from(token, 'base64url').length;
    for (let i = 0; i < length; i += 1) expect(codec.decode(flipped(token, i))).toBeUndefined();
  });

  it('refuses a cursor whose id was changed and re-encoded without the secret', () => {
    const bytes = Buffer.from(codec.encode({ lastId: 100, status: null }), 'base64url');
    const forged = Buffer.concat([bytes.subarray(0, 17), Buffer.from('999:', 'ascii')]).toString('base64url');
    expect(codec.decode(forged)).toBeUndefined();
  });

  it('refuses every truncation of a cursor', () => {
    const token = codec.encode({ lastId: 77, status: PetStatus.Sold });
    for (let n = 0; n < token.length; n += 1) expect(codec.decode(token.slice(0, n))).toBeUndefined();
  });

  it('refuses a cursor signed with another secret (another deployment, or a rotated secret)', () => {
    const other = new PageCursorCodec('another-secret-of-at-least-32-characters!');
    expect(codec.decode(other.encode({ lastId: 5, status: null }))).toBeUndefined();
  });

  it.each(['', 'A', 'not base64url at all!', 'AAAA', 'A'.repeat(128), Buffer.from('1:').toString('base64url')])(
    'refuses the garbage %j',
    (token) => {
      expect(codec.decode(token)).toBeUndefined();
    },
  );

  it('refuses a non-canonical spelling of a valid cursor', () => {
    const token = codec.encode({ lastId: 8, status: null });
    // The last character carries padding bits; another character with the same leading bits decodes alike.
    const bytes = Buffer.from(token, 'base64url');
    expect(bytes.length % 3).not.toBe(0); // 19 bytes: the last character has unused bits
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(token[token.length - 1]);
    const sibling = token.slice(0, -1) + alphabet[last ^ 0x01];
    expect(Buffer.from(sibling, 'base64url').equals(bytes)).toBe(true);
    expect(codec.decode(sibling)).toBeUndefined();
    expect(codec.decode(token)).toEqual({ lastId: 8, status: null });
  });
});
