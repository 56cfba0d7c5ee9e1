import { randomBytes } from 'node:crypto';
import { estimatedEntropyBits, MIN_SECRET_BITS } from './secret-strength';

describe('estimatedEntropyBits', () => {
  it('scores random tokens above the bound', () => {
    for (let i = 0; i < 20; i += 1) {
      expect(estimatedEntropyBits(randomBytes(32).toString('hex'))).toBeGreaterThan(MIN_SECRET_BITS);
      expect(estimatedEntropyBits(randomBytes(32).toString('base64url'))).toBeGreaterThan(MIN_SECRET_BITS);
    }
  });

  it.each([
    ['a'.repeat(32), 0],
    ['ab'.repeat(32), 64],
    ['0123456789abcdef'.repeat(2), 128],
  ])('scores %s at %s bits', (secret, bits) => {
    expect(estimatedEntropyBits(secret)).toBe(bits);
  });

  it('refuses the obviously weak: repeated characters and short patterns', () => {
    for (const weak of ['a'.repeat(64), 'ab'.repeat(32), 'password'.repeat(4), 'change-me-please'])
      expect(estimatedEntropyBits(weak)).toBeLessThan(MIN_SECRET_BITS);
  });
});
