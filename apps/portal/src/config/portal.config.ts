import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  ConfigurationError,
  EnvHostList,
  EnvIntRange,
  EnvSecret,
  EnvTrustProxy,
  LOG_LEVELS,
  LogLevelName,
  expressTrustProxy,
  hostOfUrl,
  loadEnvironment,
  parseAllowedHosts,
} from '@app/platform';
import { IsIn, IsOptional, IsString, Matches, MinLength } from 'class-validator';
import { DEFAULT_PLANS_FILE, PlanCatalogue, readPlanCatalogue } from '@app/contract';
import { PortalOidcProvider, portalOidcProvidersOf } from './portal-oidc.config';

const URL_RULE = /^https?:\/\/[^\s]+$/;

/** Every variable the developer portal reads (docs/portal.md and docs/configuration.md list the same). */
export class PortalEnvironment {
  @IsIn(['development', 'test', 'production'], { message: 'NODE_ENV must be development, test or production' })
  NODE_ENV = 'development';

  @EnvIntRange('PORTAL_PORT', 0, 65535)
  PORTAL_PORT = 3003;

  @IsString()
  PORTAL_HOST = '127.0.0.1';

  @IsOptional()
  @EnvSecret()
  @MinLength(8, {
    message: 'PORTAL_ADMIN_TOKEN must be an admin token (npm run -s keys -- token create --name portal --for portal)',
  })
  PORTAL_ADMIN_TOKEN?: string = undefined;

  @Matches(URL_RULE, { message: 'ADMIN_URL must be an http(s) URL' })
  ADMIN_URL = 'http://127.0.0.1:3002';

  @IsOptional()
  @Matches(/^postgres(ql)?:\/\//, { message: 'PORTAL_DATABASE_URL must be a postgres:// or postgresql:// URL' })
  PORTAL_DATABASE_URL?: string = undefined;

  @IsString()
  PORTAL_PGLITE_DATA_DIR = '.data/portal-pglite';

  @Matches(URL_RULE, { message: 'PORTAL_API_URL must be an http(s) URL (the public /v1 base)' })
  PORTAL_API_URL = 'http://localhost:3000/v1';

  @Matches(URL_RULE, { message: 'PORTAL_PUBLIC_URL must be an http(s) URL' })
  PORTAL_PUBLIC_URL = 'http://localhost:3003';

  @Matches(/^(\/[A-Za-z0-9._-]+)*\/?$/, { message: 'PORTAL_BASE_PATH must be empty or a path such as /portal' })
  PORTAL_BASE_PATH = '';

  @IsOptional()
  @Matches(/^smtps?:\/\//, { message: 'SMTP_URL must be an smtp:// or smtps:// URL' })
  SMTP_URL?: string = undefined;

  @IsString()
  @MinLength(3)
  MAIL_FROM = 'Pet store developer portal <portal@localhost>';

  @IsOptional()
  @EnvSecret()
  @MinLength(32, { message: 'PORTAL_SESSION_SECRET must be at least 32 characters long' })
  PORTAL_SESSION_SECRET?: string = undefined;

  /** Express's trust proxy: behind nginx, the proxy's hops (the address throttling counts is the client's). */
  @EnvTrustProxy('PORTAL_TRUST_PROXY')
  PORTAL_TRUST_PROXY = 'loopback';

  @IsString()
  PORTAL_OPENAPI_FILE = 'gateway/openapi.json';

  /** The gateway's plans (its PLANS_FILE): the pages describe plans from the same file. */
  @IsString()
  PLANS_FILE = DEFAULT_PLANS_FILE;

  @EnvIntRange('PORTAL_THROTTLE_ADDRESS_LIMIT', 1, 100000)
  PORTAL_THROTTLE_ADDRESS_LIMIT = 30;

  @EnvIntRange('PORTAL_THROTTLE_ACCOUNT_LIMIT', 1, 100000)
  PORTAL_THROTTLE_ACCOUNT_LIMIT = 5;

  @EnvIntRange('PORTAL_THROTTLE_WINDOW_SECONDS', 1, 86400)
  PORTAL_THROTTLE_WINDOW_SECONDS = 900;

  @EnvIntRange('PORTAL_SIGN_IN_PAIR_LIMIT', 1, 100000)
  PORTAL_SIGN_IN_PAIR_LIMIT = 5;

  @EnvIntRange('PORTAL_SIGN_IN_DELAY_AFTER', 1, 100000)
  PORTAL_SIGN_IN_DELAY_AFTER = 10;

  @EnvIntRange('PORTAL_SIGN_IN_MAX_DELAY_SECONDS', 1, 3600)
  PORTAL_SIGN_IN_MAX_DELAY_SECONDS = 60;

  /** The fleet's alarm (a warn line), never a refusal: docs/portal.md. */
  @EnvIntRange('PORTAL_CONSUMERS_PER_HOUR', 1, 1000000)
  PORTAL_CONSUMERS_PER_HOUR = 100;

  @EnvIntRange('PORTAL_CONSUMERS_PER_BLOCK_PER_HOUR', 1, 1000000)
  PORTAL_CONSUMERS_PER_BLOCK_PER_HOUR = 10;

  /** Prometheus metrics (the new-key counts and the fleet's hourly figure) on a port of their own; unset: none. */
  @IsOptional()
  @EnvIntRange('PORTAL_METRICS_PORT', 0, 65535)
  PORTAL_METRICS_PORT?: number = undefined;

  @IsString()
  METRICS_HOST = '127.0.0.1';

  /** At least the verification link's 24 hours: no account is purged while its link still works. */
  @EnvIntRange('PORTAL_UNVERIFIED_MAX_AGE_HOURS', 24, 8760)
  PORTAL_UNVERIFIED_MAX_AGE_HOURS = 72;

  @IsString()
  PORTAL_DATA_DIR = '.data';

  /**
   * The host names the portal answers besides loopback names and PORTAL_PUBLIC_URL's host: any other Host gets a
   * plain 400 page before the app (DNS rebinding, issue #45.7).
   */
  @EnvHostList('PORTAL_ALLOWED_HOSTS')
  PORTAL_ALLOWED_HOSTS = '';

  @IsIn(LOG_LEVELS, { message: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}` })
  LOG_LEVEL: LogLevelName = 'log';

  @EnvIntRange('SHUTDOWN_GRACE_MS', 0, 600000)
  SHUTDOWN_GRACE_MS = 10000;

  /**
   * The identity providers developers may sign in with (a JSON array; docs/sso.md): parsed and checked by
   * portalOidcProvidersOf. A secret: it holds the clients' secrets.
   */
  @IsOptional()
  @EnvSecret()
  @IsString()
  PORTAL_OIDC_PROVIDERS?: string = undefined;
}

export interface PortalConfig {
  production: boolean;
  port: number;
  host: string;
  adminToken: string;
  adminUrl: string;
  /** Absent: an embedded PGlite in pgliteDataDir. */
  databaseUrl?: string;
  pgliteDataDir: string;
  /** The schema of the portal's tables (accounts, tokens, sessions, throttling). */
  schema: string;
  apiUrl: string;
  publicUrl: string;
  basePath: string;
  smtpUrl?: string;
  mailFrom: string;
  sessionSecret: string;
  /** Express's form of PORTAL_TRUST_PROXY: a hop count is a number. */
  trustProxy: false | number | string;
  openApiFile: string;
  /** The plan catalogue (PLANS_FILE, read once here): what the plan page offers. */
  plans: PlanCatalogue;
  /**
   * addressLimit: form posts per client address block (IPv4 address, IPv6 /64) and window; accountLimit: sign-up and
   * reset requests per email and window (mail sent to one address); signIn: failed sign-ins per (account, address
   * block) pair and window, then failures on an account (any address) before each next attempt waits, up to a cap.
   */
  throttle: {
    addressLimit: number;
    accountLimit: number;
    windowMs: number;
    signIn: { pairLimit: number; delayAfter: number; maxDelayMs: number };
  };
  /**
   * Gateway consumers (one per verified account) all instances together create per hour before operators are
   * alarmed (a warn line): an alarm, never a refusal.
   */
  consumersPerHour: number;
  /** Gateway consumers made per hour for verifications and sign-ins from one address block (IPv4 address, IPv6 /64). */
  consumersPerBlockPerHour: number;
  /** Where /metrics is served (PORTAL_METRICS_PORT, METRICS_HOST); absent: not served. */
  metrics?: { port: number; host: string };
  /** Unverified accounts older than this are deleted (a periodic job). */
  unverifiedMaxAgeMs: number;
  logLevel: LogLevelName;
  shutdownGraceMs: number;
  /** The host names answered besides loopback names: PORTAL_ALLOWED_HOSTS and PORTAL_PUBLIC_URL's host. */
  allowedHosts: readonly string[];
  /** The identity providers developers may sign in with (PORTAL_OIDC_PROVIDERS); empty: none. */
  oidcProviders: readonly PortalOidcProvider[];
}

export const PORTAL_CONFIG = Symbol('PORTAL_CONFIG');

/**
 * The session secret: PORTAL_SESSION_SECRET, required in production; in development a random one kept in
 * <PORTAL_DATA_DIR>/portal-session-secret (mode 600), so that a restart keeps everyone signed in.
 */
function sessionSecret(e: PortalEnvironment): string {
  if (e.PORTAL_SESSION_SECRET) return e.PORTAL_SESSION_SECRET;
  if (e.NODE_ENV === 'production')
    throw new ConfigurationError('PORTAL_SESSION_SECRET is required in production (at least 32 random characters)');
  if (e.NODE_ENV === 'test') return randomBytes(32).toString('base64url');
  const file = path.join(e.PORTAL_DATA_DIR, 'portal-session-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(e.PORTAL_DATA_DIR, { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return secret;
}

/** PLANS_FILE as a catalogue; a wrong file stops the portal with one line. */
function planCatalogue(file: string): PlanCatalogue {
  try {
    return readPlanCatalogue(file);
  } catch (error) {
    throw new ConfigurationError(`PLANS_FILE ${(error as Error).message}`);
  }
}

/** Reads and validates the environment once; a wrong value stops the portal with one line. */
export function loadPortalConfig(env: Record<string, string | undefined> = process.env): PortalConfig {
  const e = loadEnvironment(PortalEnvironment, env);
  if (!e.PORTAL_ADMIN_TOKEN) {
    throw new ConfigurationError(
      'PORTAL_ADMIN_TOKEN is required: create one with `npm run -s keys -- token create --name portal --for portal` (npm start makes one in development)',
    );
  }
  if (e.NODE_ENV === 'production' && !e.SMTP_URL)
    throw new ConfigurationError('SMTP_URL is required in production: verification and reset links go by mail');
  const basePath = e.PORTAL_BASE_PATH.replace(/\/+$/, '');
  const oidcProviders = portalOidcProvidersOf(e.PORTAL_OIDC_PROVIDERS, e.NODE_ENV === 'production');
  return {
    oidcProviders,
    production: e.NODE_ENV === 'production',
    port: e.PORTAL_PORT,
    host: e.PORTAL_HOST,
    adminToken: e.PORTAL_ADMIN_TOKEN,
    adminUrl: e.ADMIN_URL.replace(/\/+$/, ''),
    databaseUrl: e.PORTAL_DATABASE_URL,
    pgliteDataDir: e.PORTAL_PGLITE_DATA_DIR,
    schema: 'portal',
    apiUrl: e.PORTAL_API_URL.replace(/\/+$/, ''),
    publicUrl: e.PORTAL_PUBLIC_URL.replace(/\/+$/, ''),
    basePath,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    sessionSecret: sessionSecret(e),
    trustProxy: expressTrustProxy(e.PORTAL_TRUST_PROXY),
    openApiFile: e.PORTAL_OPENAPI_FILE,
    plans: planCatalogue(e.PLANS_FILE),
    throttle: {
      addressLimit: e.PORTAL_THROTTLE_ADDRESS_LIMIT,
      accountLimit: e.PORTAL_THROTTLE_ACCOUNT_LIMIT,
      windowMs: e.PORTAL_THROTTLE_WINDOW_SECONDS * 1000,
      signIn: {
        pairLimit: e.PORTAL_SIGN_IN_PAIR_LIMIT,
        delayAfter: e.PORTAL_SIGN_IN_DELAY_AFTER,
        maxDelayMs: e.PORTAL_SIGN_IN_MAX_DELAY_SECONDS * 1000,
      },
    },
    consumersPerHour: e.PORTAL_CONSUMERS_PER_HOUR,
    consumersPerBlockPerHour: e.PORTAL_CONSUMERS_PER_BLOCK_PER_HOUR,
    metrics: e.PORTAL_METRICS_PORT === undefined ? undefined : { port: e.PORTAL_METRICS_PORT, host: e.METRICS_HOST },
    unverifiedMaxAgeMs: e.PORTAL_UNVERIFIED_MAX_AGE_HOURS * 3600 * 1000,
    logLevel: e.LOG_LEVEL,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    allowedHosts: [
      ...(parseAllowedHosts(e.PORTAL_ALLOWED_HOSTS, 'PORTAL_ALLOWED_HOSTS') as string[]),
      ...[hostOfUrl(e.PORTAL_PUBLIC_URL)].filter((host): host is string => host !== undefined),
    ],
  };
}
