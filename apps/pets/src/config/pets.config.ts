import {
  CommonEnvironment,
  ConfigurationError,
  EnvBoolean,
  EnvIntRange,
  EnvHostList,
  EnvSecret,
  HttpServerLimits,
  LogLevelName,
  NotAPlaceholderInProduction,
  httpServerLimitsOf,
  loadEnvironment,
  parseAllowedHosts,
} from '@app/platform';
import { IsBoolean, IsOptional, IsString, Matches, MinLength } from 'class-validator';

/** Every variable the pets service reads; the README's configuration table lists the same names and defaults. */
export class PetsEnvironment extends CommonEnvironment {
  @EnvIntRange('PETS_PORT', 0, 65535)
  PETS_PORT = 3001;

  @IsString()
  PETS_HOST = '127.0.0.1';

  @EnvIntRange('PETS_METRICS_PORT', 0, 65535)
  PETS_METRICS_PORT = 9465;

  @IsOptional()
  @Matches(/^postgres(ql)?:\/\//, { message: 'DATABASE_URL must be a postgres:// or postgresql:// URL' })
  DATABASE_URL?: string = undefined;

  @IsString()
  PGLITE_DATA_DIR = '.data/pglite';

  @IsOptional()
  @EnvBoolean()
  @IsBoolean({ message: 'DB_MIGRATE_ON_START must be true or false' })
  DB_MIGRATE_ON_START?: boolean = undefined;

  @EnvIntRange('DB_POOL_SIZE', 1, 100)
  DB_POOL_SIZE = 10;

  /** Required in production (loadPetsConfig): unset, cursors are signed with a key published in the source. */
  @IsOptional()
  @EnvSecret()
  @MinLength(32, { message: 'CURSOR_SECRET must be at least 32 characters long' })
  @NotAPlaceholderInProduction()
  CURSOR_SECRET?: string = undefined;

  /**
   * The host names the service answers besides loopback names (the name the gateways reach it by: PETS_URL's host,
   * `pets` in compose); any other Host gets 400 before the app (DNS rebinding, issue #45.7).
   */
  @EnvHostList('PETS_ALLOWED_HOSTS')
  PETS_ALLOWED_HOSTS = '';
}

/** The validated, typed settings the pets service runs with. */
export interface PetsConfig {
  port: number;
  host: string;
  /** Absent: the embedded PGlite database is used. */
  databaseUrl?: string;
  pgliteDataDir: string;
  migrateOnStart: boolean;
  poolSize: number;
  logLevel: LogLevelName;
  /** How long in-flight requests may take to finish after SIGTERM. */
  shutdownGraceMs: number;
  /** Prometheus metrics: a port of their own, never published. */
  metrics: { port: number; host: string };
  /** When set, every request but health must carry it (from the gateway). */
  internalSecret?: string;
  /** Signs the paging cursors of GET /pets; absent (never in production): the public development key (page-cursor.ts). */
  cursorSecret?: string;
  /** Keep-alive, header and request timeouts (defaults when absent). */
  http?: HttpServerLimits;
  /** The host names answered besides loopback names (PETS_ALLOWED_HOSTS); absent: loopback names only. */
  allowedHosts?: readonly string[];
}

export function loadPetsConfig(env: Record<string, string | undefined> = process.env): PetsConfig {
  const e = loadEnvironment(PetsEnvironment, env);
  if (e.NODE_ENV === 'production' && e.CURSOR_SECRET === undefined) {
    throw new ConfigurationError(
      'Invalid configuration: CURSOR_SECRET must be set in production (32+ characters, the same on every pets instance, e.g. openssl rand -hex 32): without it paging cursors are signed with a key published in the source',
    );
  }
  return {
    port: e.PETS_PORT,
    host: e.PETS_HOST,
    databaseUrl: e.DATABASE_URL,
    pgliteDataDir: e.PGLITE_DATA_DIR,
    // Embedded: the service owns its database, so it migrates it. External: deployments run `npm run migrate`.
    migrateOnStart: e.DB_MIGRATE_ON_START ?? e.DATABASE_URL === undefined,
    poolSize: e.DB_POOL_SIZE,
    logLevel: e.LOG_LEVEL,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    internalSecret: e.INTERNAL_SECRET,
    metrics: { port: e.PETS_METRICS_PORT, host: e.METRICS_HOST },
    cursorSecret: e.CURSOR_SECRET,
    http: httpServerLimitsOf(e),
    allowedHosts: parseAllowedHosts(e.PETS_ALLOWED_HOSTS, 'PETS_ALLOWED_HOSTS') as string[],
  };
}

export const PETS_CONFIG = Symbol('PETS_CONFIG');
