import { ConfigurationError } from '@app/platform';
import { loadPetsConfig } from './pets.config';

describe('loadPetsConfig', () => {
  it('runs on the embedded database by default, migrating it at start-up', () => {
    expect(loadPetsConfig({})).toEqual({
      port: 3001,
      host: '127.0.0.1',
      databaseUrl: undefined,
      pgliteDataDir: '.data/pglite',
      migrateOnStart: true,
      poolSize: 10,
      logLevel: 'log',
      metrics: { port: 9465, host: '127.0.0.1' },
      shutdownGraceMs: 10000,
      http: { keepAliveTimeoutMs: 75000, headersTimeoutMs: 20000, requestTimeoutMs: 30000 },
      allowedHosts: [],
    });
  });

  it('leaves migrations to `npm run migrate` on an external database unless told otherwise', () => {
    expect(loadPetsConfig({ DATABASE_URL: 'postgres://db/pets' }).migrateOnStart).toBe(false);
    expect(loadPetsConfig({ DATABASE_URL: 'postgres://db/pets', DB_MIGRATE_ON_START: 'true' }).migrateOnStart).toBe(
      true,
    );
  });

  it('refuses to run in production without CURSOR_SECRET, or with a short or published one, never printing it', () => {
    const production = { NODE_ENV: 'production' };
    expect(() => loadPetsConfig(production)).toThrow(ConfigurationError);
    expect(() => loadPetsConfig(production)).toThrow(
      /^Invalid configuration: CURSOR_SECRET must be set in production \(32\+ characters/,
    );
    expect(() => loadPetsConfig({ ...production, CURSOR_SECRET: 'too-short-secret' })).toThrow(
      'Invalid configuration: CURSOR_SECRET must be at least 32 characters long (value hidden)',
    );
    expect(() => loadPetsConfig({ ...production, CURSOR_SECRET: 'change-me-to-a-cursor-secret-of-32-chars' })).toThrow(
      'Invalid configuration: CURSOR_SECRET is a published placeholder, refused in production: set a random secret (openssl rand -hex 32) (value hidden)',
    );
    expect(loadPetsConfig({ ...production, CURSOR_SECRET: 'k'.repeat(64) }).cursorSecret).toBe('k'.repeat(64));
    // Elsewhere the development key stands in (cursors still checked, but anyone could mint them).
    expect(loadPetsConfig({}).cursorSecret).toBeUndefined();
  });

  it.each([
    [{ PETS_PORT: '70000' }, 'PETS_PORT must be an integer from 0 to 65535 (got "70000")'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL must be a postgres:// or postgresql:// URL'],
    [{ DB_MIGRATE_ON_START: 'maybe' }, 'DB_MIGRATE_ON_START must be true or false'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of error, warn, log, debug, verbose'],
    [{ CURSOR_SECRET: 'too-short' }, 'CURSOR_SECRET must be at least 32 characters long'],
    [
      { HEADERS_TIMEOUT_MS: '40000', REQUEST_TIMEOUT_MS: '30000' },
      'REQUEST_TIMEOUT_MS must not be below HEADERS_TIMEOUT_MS',
    ],
  ])('stops on %j with one clear line', (env, message) => {
    expect(() => loadPetsConfig(env)).toThrow(ConfigurationError);
    expect(() => loadPetsConfig(env)).toThrow(message);
  });
});
