import { Logger } from '@nestjs/common';
import { ATTEMPTS_PER_MINUTE, ConsoleSignInThrottle, FIRST_WAIT_MS, SLOW_AFTER_FAILURES } from './sign-in-throttle';

describe('ConsoleSignInThrottle', () => {
  let now = 1_000_000;
  const clock = () => now;
  let warn: jest.SpyInstance;
  beforeEach(() => {
    now = 1_000_000;
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => warn.mockRestore());

  it('admits ATTEMPTS_PER_MINUTE attempts per address block and minute, then refuses until the minute ends', () => {
    const throttle = new ConsoleSignInThrottle(clock);
    for (let i = 0; i < ATTEMPTS_PER_MINUTE; i += 1) expect(throttle.admit('203.0.113.1')).toEqual({ allowed: true });
    expect(throttle.admit('203.0.113.1')).toMatchObject({ allowed: false, code: 'TOO_MANY_ATTEMPTS' });
    expect(throttle.admit('203.0.113.2')).toEqual({ allowed: true });
    now += 60_000;
    expect(throttle.admit('203.0.113.1')).toEqual({ allowed: true });
  });

  it('slows a block down after failures (waits doubling), and a right token forgets them', () => {
    const throttle = new ConsoleSignInThrottle(clock);
    const block = '2001:db8:1:2::/64';
    for (let i = 0; i < SLOW_AFTER_FAILURES; i += 1) {
      expect(throttle.admit(block).allowed).toBe(true);
      throttle.failed(block, 'UNAUTHORIZED');
    }
    expect(throttle.admit(block)).toEqual({
      allowed: false,
      code: 'SLOWED_AFTER_FAILURES',
      retryAfterSeconds: FIRST_WAIT_MS / 1000,
    });
    now += FIRST_WAIT_MS;
    expect(throttle.admit(block).allowed).toBe(true);
    throttle.failed(block, 'UNAUTHORIZED'); // the wait doubles
    now += 2 * FIRST_WAIT_MS - 1;
    expect(throttle.admit(block)).toMatchObject({ allowed: false, code: 'SLOWED_AFTER_FAILURES' });
    now += 1;
    expect(throttle.admit(block).allowed).toBe(true);
    throttle.succeeded(block);
    expect(throttle.admit(block).allowed).toBe(true);
    expect(throttle.admit(block).allowed).toBe(true);
    // Every failure was logged at warn with the block and the reason, and nothing else.
    expect(warn).toHaveBeenCalledWith({
      event: 'console.sign-in.failed',
      address: block,
      reason: 'UNAUTHORIZED',
      failures: 1,
    });
  });
});
