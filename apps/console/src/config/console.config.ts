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
  NotAPlaceholderInProduction,
  expressTrustProxy,
  hostOfUrl,
  loadEnvironment,
  parseAllowedHosts,
  plainHttpAllowed,
} from '@app/platform';
import { IsIn, IsOptional, IsString, Matches, MinLength } from 'class-validator';
import { DEFAULT_PLANS_FILE, PlanCatalogue, readPlanCatalogue } from '@app/contract';

/** Every variable the operator console reads (docs/configuration.md lists the same names and defaults). */
export class ConsoleEnvironment {
  @EnvIntRange('CONSOLE_PORT', 0, 65535)
  CONSOLE_PORT = 3004;

  /** Loopback by default, like the admin API: the console holds operators' tokens and is never public. */
  @IsString()
  CONSOLE_HOST = '127.0.0.1';

  @Matches(/^https?:\/\/[^/]+/, {
    message: 'ADMIN_URL must be an http:// or https:// URL (the admin API, e.g. http://127.0.0.1:3002)',
  })
  ADMIN_URL = 'http://127.0.0.1:3002';

  @IsOptional()
  @Matches(/^postgres(ql)?:\/\//, { message: 'CONSOLE_DATABASE_URL must be a postgres:// or postgresql:// URL' })
  CONSOLE_DATABASE_URL?: string = undefined;

  @Matches(/^[a-z_][a-z0-9_]{0,62}$/, { message: 'CONSOLE_DATABASE_SCHEMA must be a lower-case SQL identifier' })
  CONSOLE_DATABASE_SCHEMA = 'console';

  /** Required in production; in development a random one is kept in CONSOLE_SESSION_SECRET_FILE. */
  @IsOptional()
  @EnvSecret()
  @MinLength(32, { message: 'CONSOLE_SESSION_SECRET must be at least 32 characters long' })
  @NotAPlaceholderInProduction()
  CONSOLE_SESSION_SECRET?: string = undefined;

  @IsString()
  CONSOLE_SESSION_SECRET_FILE = '.data/console-session-secret';

  @IsOptional()
  @Matches(/^https?:\/\/[^/]+/, { message: 'CONSOLE_PUBLIC_URL must be an http:// or https:// URL' })
  CONSOLE_PUBLIC_URL?: string = undefined;

  /**
   * Optional: an admin token with actsForUsers that reports failed sign-ins and lockouts to the admin audit (and
   * the sign-ins of operators whose own token may not). Unset: those are in the console's log only.
   */
  @IsOptional()
  @EnvSecret()
  @MinLength(16, { message: 'CONSOLE_AUDIT_TOKEN must be an admin token (at least 16 characters)' })
  CONSOLE_AUDIT_TOKEN?: string = undefined;

  @EnvIntRange('CONSOLE_IDLE_MINUTES', 1, 1440)
  CONSOLE_IDLE_MINUTES = 30;

  @IsOptional()
  @EnvTrustProxy('CONSOLE_TRUST_PROXY')
  CONSOLE_TRUST_PROXY?: string = undefined;

  @IsIn(LOG_LEVELS, { message: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}` })
  LOG_LEVEL: LogLevelName = 'log';

  @IsIn(['development', 'production', 'test'], { message: 'NODE_ENV must be development, production or test' })
  NODE_ENV = 'development';

  @EnvIntRange('SHUTDOWN_GRACE_MS', 0, 600000)
  SHUTDOWN_GRACE_MS = 10000;

  /** The gateway's plans (its PLANS_FILE): the pages describe plans from the same file. */
  @IsString()
  PLANS_FILE = DEFAULT_PLANS_FILE;

  /**
   * The host names the console answers besides loopback names and CONSOLE_PUBLIC_URL's host: any other Host gets
   * a plain 400 page before the app (DNS rebinding, issue #45.7).
   */
  @EnvHostList('CONSOLE_ALLOWED_HOSTS')
  CONSOLE_ALLOWED_HOSTS = '';

  /**
   * Sign-in with the operators' identity provider (OpenID Connect, docs/sso.md): its issuer and the console's client
   * at it. The gateway must trust the same issuer for this client (ADMIN_OIDC_ISSUER, ADMIN_OIDC_AUDIENCE).
   */
  @IsOptional()
  @Matches(/^https?:\/\/[^/?#]+[^?#]*$/, { message: 'CONSOLE_OIDC_ISSUER must be an http(s) URL without query' })
  CONSOLE_OIDC_ISSUER?: string = undefined;

  @IsOptional()
  @IsString()
  CONSOLE_OIDC_CLIENT_ID?: string = undefined;

  /** The client's secret (client_secret_basic); unset: a public client (PKCE only). */
  @IsOptional()
  @EnvSecret()
  CONSOLE_OIDC_CLIENT_SECRET?: string = undefined;

  /** What the button says: "Sign in with <name>". */
  @IsString()
  @Matches(/^[^<>&"]{1,60}$/, { message: 'CONSOLE_OIDC_NAME must be 1-60 characters, no markup' })
  CONSOLE_OIDC_NAME = 'your identity provider';

  /** The scopes asked for: the ID token must carry email and the roles claim the gateway maps. */
  @Matches(/^openid( [\x21\x23-\x5B\x5D-\x7E]+)*$/, {
    message: 'CONSOLE_OIDC_SCOPES must start with openid, scopes separated by single spaces',
  })
  CONSOLE_OIDC_SCOPES = 'openid email groups';

  /** The break-glass sign-in with a pasted admin token: on unless switched off (docs/sso.md). */
  @IsIn(['true', 'false'], { message: 'CONSOLE_TOKEN_SIGN_IN must be true or false' })
  CONSOLE_TOKEN_SIGN_IN = 'true';
}

/** The operators' identity provider as the console uses it (docs/sso.md). */
export interface ConsoleOidcConfig {
  issuer: string;
  clientId: string;
  clientSecret?: string;
  name: string;
  scopes: string;
}

export interface ConsoleConfig {
  port: number;
  host: string;
  adminUrl: string;
  /** Absent: the caller (npm start) must serve the embedded database; see loadConsoleConfig. */
  databaseUrl?: string;
  schema: string;
  sessionSecret: string;
  publicUrl?: string;
  idleTimeoutMs: number;
  /** CONSOLE_AUDIT_TOKEN: reports sign-in failures and lockouts to the admin audit; undefined: the log only. */
  auditToken?: string;
  /** Express's form of CONSOLE_TRUST_PROXY (a hop count is a number); absent when unset. */
  trustProxy?: false | number | string;
  logLevel: LogLevelName;
  production: boolean;
  /** After SIGTERM: how long in-flight requests have to finish. */
  shutdownGraceMs: number;
  /** The plan catalogue (PLANS_FILE, read once here). */
  plans: PlanCatalogue;
  /** The host names answered besides loopback names: CONSOLE_ALLOWED_HOSTS and CONSOLE_PUBLIC_URL's host. */
  allowedHosts: readonly string[];
  /** Sign-in with the operators' identity provider; undefined: none (CONSOLE_OIDC_ISSUER unset). */
  oidc?: ConsoleOidcConfig;
  /** Whether the break-glass sign-in with an admin token is offered (CONSOLE_TOKEN_SIGN_IN). */
  tokenSignIn: boolean;
}

/** CONSOLE_OIDC_*: issuer and client id together, or neither; token sign-in off needs a provider to sign in with. */
function oidcConfigOf(e: ConsoleEnvironment, production: boolean): ConsoleOidcConfig | undefined {
  if (!e.CONSOLE_OIDC_ISSUER && !e.CONSOLE_OIDC_CLIENT_ID) return undefined;
  if (!e.CONSOLE_OIDC_ISSUER || !e.CONSOLE_OIDC_CLIENT_ID)
    throw new ConfigurationError(
      'Invalid configuration: CONSOLE_OIDC_ISSUER and CONSOLE_OIDC_CLIENT_ID go together (docs/sso.md)',
    );
  const url = new URL(e.CONSOLE_OIDC_ISSUER);
  if (!plainHttpAllowed(url, production))
    throw new ConfigurationError(
      'Invalid configuration: CONSOLE_OIDC_ISSUER must be an https URL in production (http only on loopback)',
    );
  return {
    issuer: e.CONSOLE_OIDC_ISSUER,
    clientId: e.CONSOLE_OIDC_CLIENT_ID,
    clientSecret: e.CONSOLE_OIDC_CLIENT_SECRET,
    name: e.CONSOLE_OIDC_NAME,
    scopes: e.CONSOLE_OIDC_SCOPES,
  };
}

/** The development secret: random, made once, kept in a file only this user reads (sessions survive restarts). */
function developmentSecret(file: string): string {
  if (existsSync(file)) {
    const kept = readFileSync(file, 'utf8').trim();
    if (kept.length >= 32) return kept;
  }
  const secret = randomBytes(32).toString('base64url');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return secret;
}

/** PLANS_FILE as a catalogue; a wrong file stops the console with one line. */
function planCatalogue(file: string): PlanCatalogue {
  try {
    return readPlanCatalogue(file);
  } catch (error) {
    throw new ConfigurationError(`PLANS_FILE ${(error as Error).message}`);
  }
}

/** Reads and validates the environment once; a wrong value stops the console with one line. */
export function loadConsoleConfig(env: Record<string, string | undefined> = process.env): ConsoleConfig {
  const e = loadEnvironment(ConsoleEnvironment, env);
  const production = e.NODE_ENV === 'production';
  if (production && !e.CONSOLE_SESSION_SECRET) {
    throw new ConfigurationError(
      'Invalid configuration: CONSOLE_SESSION_SECRET must be set in production (32+ random characters: openssl rand -hex 32)',
    );
  }
  const oidc = oidcConfigOf(e, production);
  const tokenSignIn = e.CONSOLE_TOKEN_SIGN_IN === 'true';
  if (!tokenSignIn && !oidc)
    throw new ConfigurationError(
      'Invalid configuration: CONSOLE_TOKEN_SIGN_IN=false needs CONSOLE_OIDC_ISSUER (nobody could sign in otherwise)',
    );
  return {
    oidc,
    tokenSignIn,
    port: e.CONSOLE_PORT,
    host: e.CONSOLE_HOST,
    adminUrl: e.ADMIN_URL.replace(/\/+$/, ''),
    databaseUrl: e.CONSOLE_DATABASE_URL,
    schema: e.CONSOLE_DATABASE_SCHEMA,
    sessionSecret: e.CONSOLE_SESSION_SECRET ?? developmentSecret(e.CONSOLE_SESSION_SECRET_FILE),
    publicUrl: e.CONSOLE_PUBLIC_URL,
    idleTimeoutMs: e.CONSOLE_IDLE_MINUTES * 60_000,
    auditToken: e.CONSOLE_AUDIT_TOKEN,
    trustProxy: e.CONSOLE_TRUST_PROXY === undefined ? undefined : expressTrustProxy(e.CONSOLE_TRUST_PROXY),
    logLevel: e.LOG_LEVEL,
    production,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    plans: planCatalogue(e.PLANS_FILE),
    allowedHosts: [
      ...(parseAllowedHosts(e.CONSOLE_ALLOWED_HOSTS, 'CONSOLE_ALLOWED_HOSTS') as string[]),
      ...[hostOfUrl(e.CONSOLE_PUBLIC_URL)].filter((host): host is string => host !== undefined),
    ],
  };
}
