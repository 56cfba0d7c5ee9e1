import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigurationError } from '@app/platform';
import { loadPortalConfig } from './portal.config';

const TOKEN = 'adm_0123456789abcdef0123456789abcdef0123456789a';

describe('loadPortalConfig', () => {
  it('needs the portal admin token, saying how to make one', () => {
    expect(() => loadPortalConfig({ NODE_ENV: 'test' })).toThrow(
      /PORTAL_ADMIN_TOKEN is required: create one with `npm run -s keys -- token create --name portal --for portal`/,
    );
  });

  it('stops on a wrong value with one line naming the variable', () => {
    expect(() =>
      loadPortalConfig({ NODE_ENV: 'test', PORTAL_ADMIN_TOKEN: TOKEN, PORTAL_API_URL: 'localhost:3000' }),
    ).toThrow(/PORTAL_API_URL must be an http\(s\) URL/);
    expect(() =>
      loadPortalConfig({ NODE_ENV: 'test', PORTAL_ADMIN_TOKEN: TOKEN, PORTAL_BASE_PATH: 'portal x' }),
    ).toThrow(/PORTAL_BASE_PATH/);
    expect(() =>
      loadPortalConfig({ NODE_ENV: 'test', PORTAL_ADMIN_TOKEN: TOKEN, SMTP_URL: 'mail.example.com' }),
    ).toThrow(/SMTP_URL must be an smtp/);
    expect(() => loadPortalConfig({ NODE_ENV: 'test', PORTAL_ADMIN_TOKEN: TOKEN, PORTAL_PORT: '70000' })).toThrow(
      /PORTAL_PORT/,
    );
  });

  it('reads the account abuse settings, and refuses an unverified age shorter than the link (24 h)', () => {
    const base = { NODE_ENV: 'test', PORTAL_ADMIN_TOKEN: TOKEN };
    const defaults = loadPortalConfig(base);
    expect(defaults.throttle.signIn).toEqual({ pairLimit: 5, delayAfter: 10, maxDelayMs: 60_000 });
    expect([defaults.consumersPerHour, defaults.consumersPerBlockPerHour]).toEqual([100, 10]);
    expect(defaults.unverifiedMaxAgeMs).toBe(72 * 3600 * 1000);
    const set = loadPortalConfig({
      ...base,
      PORTAL_CONSUMERS_PER_HOUR: '7',
      PORTAL_CONSUMERS_PER_BLOCK_PER_HOUR: '2',
      PORTAL_UNVERIFIED_MAX_AGE_HOURS: '24',
    });
    expect([set.consumersPerHour, set.consumersPerBlockPerHour, set.unverifiedMaxAgeMs]).toEqual([
      7,
      2,
      24 * 3600 * 1000,
    ]);
    expect(() => loadPortalConfig({ ...base, PORTAL_CONSUMERS_PER_BLOCK_PER_HOUR: '0' })).toThrow(
      /PORTAL_CONSUMERS_PER_BLOCK_PER_HOUR/,
    );
    expect(() => loadPortalConfig({ ...base, PORTAL_UNVERIFIED_MAX_AGE_HOURS: '23' })).toThrow(
      /PORTAL_UNVERIFIED_MAX_AGE_HOURS/,
    );
  });

  it('gives Express a hop count as a number and the default loopback as it is; refuses true with one line', () => {
    const base = { NODE_ENV: 'test', PORTAL_ADMIN_TOKEN: TOKEN };
    expect(loadPortalConfig({ ...base, PORTAL_TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadPortalConfig(base).trustProxy).toBe('loopback');
    expect(loadPortalConfig({ ...base, PORTAL_TRUST_PROXY: 'uniquelocal' }).trustProxy).toBe('uniquelocal');
    expect(loadPortalConfig({ ...base, PORTAL_TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    const refusal = (env: Record<string, string>) => {
      try {
        loadPortalConfig({ ...base, ...env });
      } catch (error) {
        return error as Error;
      }
      throw new Error('accepted');
    };
    const refused = refusal({ PORTAL_TRUST_PROXY: 'true' });
    expect(refused).toBeInstanceOf(ConfigurationError);
    expect(refused.message).toMatch(
      /^Invalid configuration: PORTAL_TRUST_PROXY=true believes any X-Forwarded-For a client sends/,
    );
    expect(refused.message).not.toContain('\n');
    expect(refusal({ PORTAL_TRUST_PROXY: 'proxy.internal' }).message).toMatch(
      /PORTAL_TRUST_PROXY must be false, a hop count, or a comma-separated list/,
    );
  });

  it('requires a session secret and SMTP in production', () => {
    const base = { NODE_ENV: 'production', PORTAL_ADMIN_TOKEN: TOKEN };
    expect(() => loadPortalConfig(base)).toThrow(/SMTP_URL is required in production/);
    expect(() => loadPortalConfig({ ...base, SMTP_URL: 'smtp://mail:25' })).toThrow(
      /PORTAL_SESSION_SECRET is required in production/,
    );
    expect(() => loadPortalConfig({ ...base, SMTP_URL: 'smtp://mail:25', PORTAL_SESSION_SECRET: 'short' })).toThrow(
      /at least 32 characters long \(value hidden\)/,
    );
    const config = loadPortalConfig({
      ...base,
      SMTP_URL: 'smtp://mail:25',
      PORTAL_SESSION_SECRET: 'x'.repeat(32),
      PORTAL_BASE_PATH: '/portal/',
    });
    expect(config).toMatchObject({
      production: true,
      port: 3003,
      basePath: '/portal',
      schema: 'portal',
      adminUrl: 'http://127.0.0.1:3002',
    });
  });

  it('keeps a generated session secret in development, so a restart keeps sessions', () => {
    const dir = mkdtempSync(join(tmpdir(), 'portal-config-'));
    const env = { NODE_ENV: 'development', PORTAL_ADMIN_TOKEN: TOKEN, PORTAL_DATA_DIR: dir };
    const first = loadPortalConfig(env).sessionSecret;
    expect(first.length).toBeGreaterThanOrEqual(32);
    expect(loadPortalConfig(env).sessionSecret).toBe(first);
    expect(readFileSync(join(dir, 'portal-session-secret'), 'utf8').trim()).toBe(first);
    expect(statSync(join(dir, 'portal-session-secret')).mode & 0o777).toBe(0o600);
  });
});
