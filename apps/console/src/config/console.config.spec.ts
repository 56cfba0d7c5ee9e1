import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigurationError } from '@app/platform';
import { loadConsoleConfig } from './console.config';

describe('loadConsoleConfig', () => {
  const secretFile = () => join(mkdtempSync(join(tmpdir(), 'console-config-')), 'secret');

  it('runs on loopback port 3004 against the local admin API, with a development secret kept in a file', () => {
    const file = secretFile();
    const config = loadConsoleConfig({ CONSOLE_SESSION_SECRET_FILE: file });
    expect(config).toMatchObject({
      port: 3004,
      host: '127.0.0.1',
      adminUrl: 'http://127.0.0.1:3002',
      schema: 'console',
      idleTimeoutMs: 30 * 60_000,
      production: false,
      shutdownGraceMs: 10_000,
    });
    expect(config.sessionSecret.length).toBeGreaterThanOrEqual(32);
    expect(readFileSync(file, 'utf8').trim()).toBe(config.sessionSecret);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(loadConsoleConfig({ CONSOLE_SESSION_SECRET_FILE: file }).sessionSecret).toBe(config.sessionSecret);
  });

  it('refuses to run in production without CONSOLE_SESSION_SECRET, or with a short or published one, never printing it', () => {
    const production = { NODE_ENV: 'production' };
    expect(() => loadConsoleConfig(production)).toThrow(
      /^Invalid configuration: CONSOLE_SESSION_SECRET must be set in production/,
    );
    expect(() => loadConsoleConfig({ ...production, CONSOLE_SESSION_SECRET: 'short' })).toThrow(
      'CONSOLE_SESSION_SECRET must be at least 32 characters long (value hidden)',
    );
    expect(() =>
      loadConsoleConfig({ ...production, CONSOLE_SESSION_SECRET: 'change-me-to-a-session-secret-of-32-chars' }),
    ).toThrow(/published placeholder.*\(value hidden\)/);
    expect(loadConsoleConfig({ ...production, CONSOLE_SESSION_SECRET: 's'.repeat(40) }).sessionSecret).toBe(
      's'.repeat(40),
    );
  });

  it.each([
    [{ CONSOLE_PORT: '70000' }, 'CONSOLE_PORT must be an integer from 0 to 65535 (got "70000")'],
    [{ ADMIN_URL: 'ftp://x' }, 'ADMIN_URL must be an http:// or https:// URL'],
    [{ CONSOLE_DATABASE_URL: 'mysql://x' }, 'CONSOLE_DATABASE_URL must be a postgres:// or postgresql:// URL'],
    [{ CONSOLE_DATABASE_SCHEMA: 'Bad-Schema' }, 'CONSOLE_DATABASE_SCHEMA must be a lower-case SQL identifier'],
    [{ CONSOLE_PUBLIC_URL: 'console.example.com' }, 'CONSOLE_PUBLIC_URL must be an http:// or https:// URL'],
    [{ CONSOLE_IDLE_MINUTES: '0' }, 'CONSOLE_IDLE_MINUTES must be an integer from 1 to 1440'],
  ])('stops on %j with one clear line', (env, message) => {
    const withFile = { CONSOLE_SESSION_SECRET_FILE: secretFile(), ...env };
    expect(() => loadConsoleConfig(withFile)).toThrow(ConfigurationError);
    expect(() => loadConsoleConfig(withFile)).toThrow(message);
  });

  it('reads the public URL (https: Secure cookies) and a trust-proxy setting', () => {
    const config = loadConsoleConfig({
      CONSOLE_SESSION_SECRET_FILE: secretFile(),
      CONSOLE_PUBLIC_URL: 'https://console.admin.example.com',
      CONSOLE_TRUST_PROXY: '1',
      ADMIN_URL: 'http://10.0.0.5:3002/',
    });
    expect(config).toMatchObject({
      publicUrl: 'https://console.admin.example.com',
      trustProxy: 1,
      adminUrl: 'http://10.0.0.5:3002',
    });
    expect(loadConsoleConfig({ CONSOLE_SESSION_SECRET_FILE: secretFile() }).trustProxy).toBeUndefined();
    expect(() => loadConsoleConfig({ CONSOLE_SESSION_SECRET_FILE: secretFile(), CONSOLE_TRUST_PROXY: 'true' })).toThrow(
      /^Invalid configuration: CONSOLE_TRUST_PROXY=true believes any X-Forwarded-For/,
    );
  });

  it('takes the identity provider with its client id, and refuses token sign-in off without one (docs/sso.md)', () => {
    const env = { NODE_ENV: 'test', CONSOLE_SESSION_SECRET: 's'.repeat(32), CONSOLE_DATABASE_URL: 'postgres://x/y' };
    expect(loadConsoleConfig(env)).toMatchObject({ oidc: undefined, tokenSignIn: true });
    const sso = { ...env, CONSOLE_OIDC_ISSUER: 'http://127.0.0.1:9000', CONSOLE_OIDC_CLIENT_ID: 'console' };
    expect(loadConsoleConfig({ ...sso, CONSOLE_TOKEN_SIGN_IN: 'false' })).toMatchObject({
      oidc: { issuer: 'http://127.0.0.1:9000', clientId: 'console', scopes: 'openid email groups' },
      tokenSignIn: false,
    });
    expect(() => loadConsoleConfig({ ...env, CONSOLE_TOKEN_SIGN_IN: 'false' })).toThrow(/needs CONSOLE_OIDC_ISSUER/);
    expect(() => loadConsoleConfig({ ...env, CONSOLE_OIDC_ISSUER: 'https://idp.example.com' })).toThrow(/go together/);
  });
});
