import { ConfigurationError } from '@app/platform';
import { loadGatewayConfig } from './gateway.config';

/** A production ADMIN_TOKEN as `openssl rand -hex 32` makes one (the config refuses weak ones). */
const STRONG_TOKEN = '3f9c1a7e5b2d48f0a6c3e9b17d2f4a8c05e7b9d1c3a5f7e9b2d4c6a8e0f1b3d5';

describe('loadGatewayConfig', () => {
  it('runs on embedded defaults: in-process counters, the local pets service, a demo key in development', () => {
    const config = loadGatewayConfig({});
    expect(config).toMatchObject({
      port: 3000,
      petsUrl: 'http://127.0.0.1:3001',
      redis: undefined,
      trustProxy: false,
      demoKey: true,
      rateLimit: {
        anonymousPerMinute: 30,
        banThreshold: 20,
        banDurationMs: 600_000,
        banGraceMs: 5_000,
        failureMode: 'open',
        memoryMaxTrackers: 100_000,
        windowMs: { minute: 60_000, day: 86_400_000 },
      },
    });
  });

  it('follows PETS_PORT when PETS_URL is unset', () => {
    expect(loadGatewayConfig({ PETS_PORT: '4101' }).petsUrl).toBe('http://127.0.0.1:4101');
    expect(loadGatewayConfig({ PETS_PORT: '4101', PETS_URL: 'http://pets:3001' }).petsUrl).toBe('http://pets:3001');
    expect(loadGatewayConfig({ PETS_PORT: '0', PETS_URL: 'http://pets:3001' }).petsUrl).toBe('http://pets:3001');
    expect(() => loadGatewayConfig({ PETS_PORT: '0' })).toThrow('PETS_URL must be set when PETS_PORT is 0');
  });

  it('never mints a demo key in production', () => {
    expect(loadGatewayConfig({ NODE_ENV: 'production', DEMO_KEY: 'true', ADMIN_TOKEN: STRONG_TOKEN }).demoKey).toBe(
      false,
    );
  });

  it('keeps consumers in an embedded database and the admin API on loopback by default', () => {
    expect(loadGatewayConfig({})).toMatchObject({
      consumers: {
        databaseUrl: undefined,
        schema: 'gateway',
        pgliteDataDir: '.data/gateway-pglite',
        migrateOnStart: true,
      },
      admin: { port: 3002, host: '127.0.0.1', token: undefined, tokenFile: '.data/admin-token' },
    });
  });

  it('bounds the CSV usage export: two at once, 10 s for a client to take a page, 15 min in all, each validated', () => {
    expect(loadGatewayConfig({}).usage.export).toEqual({ concurrency: 2, writeTimeoutMs: 10_000, timeoutMs: 900_000 });
    expect(
      loadGatewayConfig({
        USAGE_EXPORT_CONCURRENCY: '4',
        USAGE_EXPORT_WRITE_TIMEOUT_MS: '2500',
        USAGE_EXPORT_TIMEOUT_MS: '60000',
      }).usage.export,
    ).toEqual({
      concurrency: 4,
      writeTimeoutMs: 2_500,
      timeoutMs: 60_000,
    });
    for (const [name, value] of [
      ['USAGE_EXPORT_CONCURRENCY', '0'],
      ['USAGE_EXPORT_WRITE_TIMEOUT_MS', 'soon'],
      ['USAGE_EXPORT_TIMEOUT_MS', '999'],
    ]) {
      expect(() => loadGatewayConfig({ [name]: value })).toThrow(ConfigurationError);
      expect(() => loadGatewayConfig({ [name]: value })).toThrow(name);
    }
  });

  it('reads the threshold events once: 80 % and 100 %, a low balance of 100, each validated', () => {
    expect(loadGatewayConfig({}).alerts).toEqual({
      enabled: true,
      windowThresholds: [0.8, 1],
      creditsLowBalance: 100,
      flushMs: 1_000,
      reconcileMs: 30_000,
      eventRetentionDays: 400,
    });
    // Sorted, each once.
    expect(loadGatewayConfig({ ALERT_THRESHOLDS_PERCENT: '100,50,90,50' }).alerts.windowThresholds).toEqual([
      0.5, 0.9, 1,
    ]);
    for (const [name, value] of [
      ['ALERT_THRESHOLDS_PERCENT', '0,80'],
      ['ALERT_THRESHOLDS_PERCENT', '80,101'],
      ['ALERT_THRESHOLDS_PERCENT', '80, 100'],
      ['ALERT_THRESHOLDS_PERCENT', '0.8'],
      ['ALERT_CREDITS_LOW_BALANCE', '-1'],
      ['ALERT_FLUSH_MS', '10'],
      ['ALERT_RECONCILE_MS', '999'],
      ['ALERTS_ENABLED', 'maybe'],
    ]) {
      expect(() => loadGatewayConfig({ [name]: value })).toThrow(ConfigurationError);
      expect(() => loadGatewayConfig({ [name]: value })).toThrow(name);
    }
  });

  it('reads TRUST_PROXY as express expects it: a hop count or addresses/subnets, never true', () => {
    expect(loadGatewayConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadGatewayConfig({ TRUST_PROXY: '10.0.0.0/8' }).trustProxy).toBe('10.0.0.0/8');
    expect(loadGatewayConfig({ TRUST_PROXY: 'uniquelocal' }).trustProxy).toBe('uniquelocal');
    expect(loadGatewayConfig({ TRUST_PROXY: '0' }).trustProxy).toBe(false);
  });

  it('takes the origin of its absolute links from PUBLIC_ORIGIN only, and none by default (relative links)', () => {
    expect(loadGatewayConfig({}).publicOrigin).toBeUndefined();
    expect(loadGatewayConfig({ NODE_ENV: 'production', ADMIN_TOKEN: STRONG_TOKEN }).publicOrigin).toBeUndefined();
    expect(loadGatewayConfig({ PUBLIC_ORIGIN: 'https://api.petstore.example.com' }).publicOrigin).toBe(
      'https://api.petstore.example.com',
    );
    expect(loadGatewayConfig({ PUBLIC_ORIGIN: 'http://localhost:8080' }).publicOrigin).toBe('http://localhost:8080');
    expect(loadGatewayConfig({ PUBLIC_ORIGIN: 'http://[::1]:8080' }).publicOrigin).toBe('http://[::1]:8080');
    for (const value of [
      'https://api.example.com/',
      'https://api.example.com/v1',
      'api.example.com',
      'ftp://api.example.com',
      'https://user@api.example.com',
    ]) {
      expect(() => loadGatewayConfig({ PUBLIC_ORIGIN: value })).toThrow(
        `Invalid configuration: PUBLIC_ORIGIN must be an http(s) origin without a path, such as https://api.petstore.example.com (got "${value}")`,
      );
    }
  });

  it('uses Redis with its prefix when REDIS_URL is set', () => {
    expect(loadGatewayConfig({ REDIS_URL: 'redis://cache:6379', REDIS_KEY_PREFIX: 'x:' }).redis).toEqual({
      connection: { topology: { kind: 'standalone', url: 'redis://cache:6379' }, tls: false, connectTimeoutMs: 2000 },
      keyPrefix: 'x:',
      commandTimeoutMs: 2000,
    });
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT must be an integer from 0 to 65535 (got "eighty")'],
    [{ PETS_URL: 'pets:3001' }, 'PETS_URL must be an http(s) origin'],
    [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL must be a redis:// or rediss:// URL'],
    [{ BAN_THRESHOLD: '0' }, 'BAN_THRESHOLD must be an integer from 1 to 1000000'],
    [{ TRUST_PROXY: 'true' }, 'TRUST_PROXY=true believes any X-Forwarded-For a client sends'],
    [{ TRUST_PROXY: 'proxy.internal' }, 'TRUST_PROXY must be false, a hop count, or a comma-separated list'],
    [{ RATE_LIMIT_FAILURE_MODE: 'sometimes' }, 'RATE_LIMIT_FAILURE_MODE must be open or closed'],
    [{ BAN_GRACE_MS: '-1' }, 'BAN_GRACE_MS must be an integer from 0 to 3600000'],
    [{ PUBLIC_URL_PRODUCTION: 'https://api.example.com' }, 'PUBLIC_URL_PRODUCTION must be an https URL ending in /v1'],
    [{ NODE_ENV: 'production' }, 'ADMIN_TOKEN must be set in production'],
    [{ NODE_ENV: 'production', ADMIN_TOKEN: 'change-me-admin-token-change-me-admin-token' }, 'not a placeholder'],
    [
      { NODE_ENV: 'production', ADMIN_TOKEN: 'a'.repeat(32) },
      'ADMIN_TOKEN is too weak for production (about 0 bits, at least 128: it repeats too few distinct characters)',
    ],
    [
      { NODE_ENV: 'production', ADMIN_TOKEN: 'adminadminadminadminadminadmin12' },
      'ADMIN_TOKEN is too weak for production',
    ],
    [
      { NODE_ENV: 'production', ADMIN_TOKEN: '9f86d081884c'.repeat(4) },
      'ADMIN_TOKEN is too weak for production (about 39 bits, at least 128: it repeats itself)',
    ],
    [{ NODE_ENV: 'production', ADMIN_TOKEN: '0123456789abcdefghijklmnopqrstuvwxyzABCDEF' }, 'it is a sequence'],
    [{ NODE_ENV: 'production', ADMIN_TOKEN: '176438400012317643840013571764384098765' }, 'it is made of timestamps'],
    [{ ADMIN_TOKEN: 'short' }, 'ADMIN_TOKEN must be at least 32 characters long'],
    [{ GATEWAY_DATABASE_URL: 'mysql://db' }, 'GATEWAY_DATABASE_URL must be a postgres:// or postgresql:// URL'],
    [{ GATEWAY_DB_SCHEMA: 'Gateway; DROP' }, 'GATEWAY_DB_SCHEMA must be a lower-case SQL identifier'],
  ])('stops on %j with one clear line', (env, message) => {
    expect(() => loadGatewayConfig(env)).toThrow(ConfigurationError);
    expect(() => loadGatewayConfig(env)).toThrow(message);
  });
});
