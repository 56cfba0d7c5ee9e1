import { randomBytes } from 'node:crypto';
import { estimatedEntropyBits, MIN_SECRET_BITS, secretStrength } from './secret-strength';

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

describe('secretStrength', () => {
  /** Timestamps of one moment, as a script making a "random" token would take them. */
  const now = Date.now();

  it('passes the documented generators every time: openssl rand -hex 32, 32 random bytes in base64url', () => {
    for (let i = 0; i < 40; i += 1) {
      for (const token of [randomBytes(32).toString('hex'), randomBytes(32).toString('base64url')]) {
        const strength = secretStrength(token);
        expect([token, strength.bits >= MIN_SECRET_BITS]).toEqual([token, true]);
      }
    }
  });

  it.each([
    ['48 random bits repeated four times', randomBytes(6).toString('hex').repeat(4), 'repeats'],
    ['48 random bits in base64url four times', randomBytes(6).toString('base64url').repeat(4), 'repeats'],
    ['the sequence 0123…xyzABCDEF', '0123456789abcdefghijklmnopqrstuvwxyzABCDEF', 'sequence'],
    ['three concatenated ms timestamps', `${now}${now + 17}${now + 4242}`, 'timestamps'],
    ['four concatenated ms timestamps', `${now}${now + 17}${now + 4242}${now + 90_000}`, 'timestamps'],
    [
      'three second timestamps with a separator',
      [0, 1, 2].map((i) => Math.floor(now / 1000) + i).join('-'),
      'timestamps',
    ],
    ['nanosecond timestamps', `${now}123456${now + 1}654321`, ''],
    ['a word and a timestamp', `petstore-admin-token-${now}-${now + 5}`, ''],
    ['a repeated password', 'correcthorsebatterystaple'.repeat(2), ''],
    ['a keyboard walk', 'qwertyuiopasdfghjklzxcvbnm1234567890', ''],
    ['a long run of one timestamp-like digit', '1'.repeat(400), ''],
  ])('refuses %s and says why', (_what, secret, why) => {
    const strength = secretStrength(secret, ['admin', 'token', 'petstore']);
    expect(strength.bits).toBeLessThan(MIN_SECRET_BITS);
    expect(strength.weakness).toContain(why);
  });

  it('does not mistake random digits for timestamps', () => {
    for (let i = 0; i < 20; i += 1) {
      const digits = [...randomBytes(64)].map((b) => String(b % 10)).join('');
      expect(secretStrength(digits).bits).toBeGreaterThanOrEqual(MIN_SECRET_BITS);
    }
  });
});
