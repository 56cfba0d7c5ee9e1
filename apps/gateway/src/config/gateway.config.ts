import {
  CommonEnvironment,
  ConfigurationError,
  EnvBoolean,
  EnvIntRange,
  EnvTrustProxy,
  HttpServerLimits,
  LogLevelName,
  expressTrustProxy,
  httpServerLimitsOf,
  loadEnvironment,
  MIN_SECRET_BITS,
  secretStrength,
  EnvHostList,
  hostOfUrl,
  parseAllowedHosts,
} from '@app/platform';
import { OutboundAllowList } from '@app/outbound';
import { IsBoolean, IsIn, IsOptional, IsString, Matches, MinLength, ValidateBy } from 'class-validator';
import { parseRedisNodes, RedisConnectionConfig, redisConnectionFromEnvironment } from './redis.config';
import { OAuthConfig, oauthConfigOf } from './oauth.config';
import { AdminOidcConfig, adminOidcConfigOf } from './admin-oidc.config';
import { USAGE_EXPORT_FORMATS, UsageExportConfig, UsageExportFormat, usageExportConfigOf } from './usage-export.config';

/** Why OUTBOUND_ALLOW_LIST is wrong, or null (OutboundAllowList.parse names the entry). */
function allowListError(value: string): string | null {
  try {
    OutboundAllowList.parse(value);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

/** A `host:port,host:port` list of Redis nodes (issue #14). */
const RedisNodeList = (name: string): PropertyDecorator =>
  ValidateBy(
    {
      name: 'redisNodeList',
      validator: { validate: (value: unknown) => typeof value === 'string' && parseRedisNodes(value) !== undefined },
    },
    { message: `${name} must be a comma-separated list of host:port` },
  );

/** Every variable the gateway reads; the README's configuration table lists the same names and defaults. */
export class GatewayEnvironment extends CommonEnvironment {
  @EnvIntRange('PORT', 0, 65535)
  PORT = 3000;

  @IsString()
  HOST = '0.0.0.0';

  /** Unset: the pets service on this machine, at PETS_PORT. */
  @IsOptional()
  @Matches(/^https?:\/\/[^/]+$/, { message: 'PETS_URL must be an http(s) origin such as http://127.0.0.1:3001' })
  PETS_URL?: string = undefined;

  @EnvIntRange('PETS_PORT', 0, 65535)
  PETS_PORT = 3001;

  @EnvIntRange('UPSTREAM_TIMEOUT_MS', 1, 600000)
  UPSTREAM_TIMEOUT_MS = 10000;

  @EnvIntRange('UPSTREAM_CONNECT_TIMEOUT_MS', 1, 60000)
  UPSTREAM_CONNECT_TIMEOUT_MS = 2000;

  @EnvIntRange('UPSTREAM_CONNECTIONS', 1, 1024)
  UPSTREAM_CONNECTIONS = 64;

  @EnvIntRange('METRICS_PORT', 0, 65535)
  METRICS_PORT = 9464;

  @IsString()
  PLANS_FILE = 'gateway/plans.json';

  // --- Control plane: consumers and keys (database, cache, admin API) ---
  @IsOptional()
  @Matches(/^postgres(ql)?:\/\//, { message: 'GATEWAY_DATABASE_URL must be a postgres:// or postgresql:// URL' })
  GATEWAY_DATABASE_URL?: string = undefined;

  @Matches(/^[a-z_][a-z0-9_]{0,62}$/, { message: 'GATEWAY_DB_SCHEMA must be a lower-case SQL identifier' })
  GATEWAY_DB_SCHEMA = 'gateway';

  @IsString()
  GATEWAY_PGLITE_DATA_DIR = '.data/gateway-pglite';

  @EnvIntRange('GATEWAY_DB_POOL_SIZE', 1, 100)
  GATEWAY_DB_POOL_SIZE = 4;

  @IsOptional()
  @EnvBoolean()
  @IsBoolean({ message: 'GATEWAY_DB_MIGRATE_ON_START must be true or false' })
  GATEWAY_DB_MIGRATE_ON_START?: boolean = undefined;

  @EnvIntRange('KEY_CACHE_SIZE', 100, 10000000)
  KEY_CACHE_SIZE = 100000;

  @EnvIntRange('KEY_CACHE_TTL_MS', 100, 3600000)
  KEY_CACHE_TTL_MS = 30000;

  @EnvIntRange('KEY_NEGATIVE_CACHE_SIZE', 100, 10000000)
  KEY_NEGATIVE_CACHE_SIZE = 20000;

  @EnvIntRange('KEY_NEGATIVE_CACHE_TTL_MS', 100, 3600000)
  KEY_NEGATIVE_CACHE_TTL_MS = 10000;

  @EnvIntRange('KEY_LOOKUPS_PER_SECOND', 1, 1000000)
  KEY_LOOKUPS_PER_SECOND = 500;

  @EnvIntRange('KEY_LOOKUP_BATCH_SIZE', 1, 1000)
  KEY_LOOKUP_BATCH_SIZE = 200;

  @EnvIntRange('CONSUMER_MAX_KEYS', 1, 100000)
  CONSUMER_MAX_KEYS = 100;

  @EnvIntRange('KEY_FILTER_REBUILD_MS', 1000, 86400000)
  KEY_FILTER_REBUILD_MS = 300000;

  @EnvIntRange('ADMIN_PORT', 0, 65535)
  ADMIN_PORT = 3002;

  @IsString()
  ADMIN_HOST = '127.0.0.1';

  @IsOptional()
  @MinLength(32, { message: 'ADMIN_TOKEN must be at least 32 characters long' })
  ADMIN_TOKEN?: string = undefined;

  @IsString()
  ADMIN_TOKEN_FILE = '.data/admin-token';

  @EnvIntRange('AUDIT_RETENTION_DAYS', 1, 36500)
  AUDIT_RETENTION_DAYS = 730;

  // Usage history (issue #23): hourly buckets in memory, flushed to the gateway's database.
  @EnvBoolean()
  @IsBoolean({ message: 'USAGE_ENABLED must be true or false' })
  USAGE_ENABLED = true;

  @EnvIntRange('USAGE_FLUSH_MS', 100, 300000)
  USAGE_FLUSH_MS = 5000;

  @EnvIntRange('USAGE_MAX_BUCKETS', 100, 10000000)
  USAGE_MAX_BUCKETS = 50000;

  @EnvIntRange('USAGE_RETENTION_DAYS', 1, 36500)
  USAGE_RETENTION_DAYS = 400;

  // The per-minute, per-operation rows (usage_minutely, the usage export's source): their bound and their life.
  @EnvIntRange('USAGE_MAX_MINUTE_CELLS', 100, 10000000)
  USAGE_MAX_MINUTE_CELLS = 200000;

  @EnvIntRange('USAGE_MINUTE_RETENTION_DAYS', 1, 36500)
  USAGE_MINUTE_RETENTION_DAYS = 40;

  // The CSV export's bounds (issue #36): exports at once per instance, and how long one may wait on its client.
  @EnvIntRange('USAGE_EXPORT_CONCURRENCY', 1, 100)
  USAGE_EXPORT_CONCURRENCY = 2;

  @EnvIntRange('USAGE_EXPORT_WRITE_TIMEOUT_MS', 100, 600000)
  USAGE_EXPORT_WRITE_TIMEOUT_MS = 10000;

  @EnvIntRange('USAGE_EXPORT_TIMEOUT_MS', 1000, 86400000)
  USAGE_EXPORT_TIMEOUT_MS = 900000;

  // Threshold events (issue #49, docs/alerts.md): which thresholds, how soon they are written, how often reconciled.
  @EnvBoolean()
  @IsBoolean({ message: 'ALERTS_ENABLED must be true or false' })
  ALERTS_ENABLED = true;

  @Matches(/^(100|[1-9][0-9]?)(,(100|[1-9][0-9]?))*$/, {
    message: 'ALERT_THRESHOLDS_PERCENT must be a comma-separated list of whole percents from 1 to 100, such as 80,100',
  })
  ALERT_THRESHOLDS_PERCENT = '80,100';

  @EnvIntRange('ALERT_CREDITS_LOW_BALANCE', 0, 2000000000)
  ALERT_CREDITS_LOW_BALANCE = 100;

  @EnvIntRange('ALERT_FLUSH_MS', 50, 60000)
  ALERT_FLUSH_MS = 1000;

  @EnvIntRange('ALERT_RECONCILE_MS', 1000, 3600000)
  ALERT_RECONCILE_MS = 30000;

  /** Days a threshold event is kept after its period ended (a credit level's: after a later top-up re-armed it). */
  @EnvIntRange('ALERT_EVENT_RETENTION_DAYS', 1, 36500)
  ALERT_EVENT_RETENTION_DAYS = 400;

  // Webhooks (issue #49, docs/webhooks.md): the delivery worker's pace and bounds, and where requests may go.
  @EnvBoolean()
  @IsBoolean({ message: 'WEBHOOKS_ENABLED must be true or false' })
  WEBHOOKS_ENABLED = true;

  @EnvIntRange('WEBHOOK_POLL_MS', 20, 60000)
  WEBHOOK_POLL_MS = 1000;

  @EnvIntRange('WEBHOOK_TIMEOUT_MS', 100, 60000)
  WEBHOOK_TIMEOUT_MS = 10000;

  @EnvIntRange('WEBHOOK_CONCURRENCY', 1, 1000)
  WEBHOOK_CONCURRENCY = 10;

  @EnvIntRange('WEBHOOK_MAX_ENDPOINTS', 1, 1000)
  WEBHOOK_MAX_ENDPOINTS = 10;

  @EnvIntRange('WEBHOOK_DISABLE_AFTER_MS', 1000, 31536000000)
  WEBHOOK_DISABLE_AFTER_MS = 5 * 86_400_000;

  /** Days finished deliveries (with their attempts) and fanned-out outbox messages are kept. */
  @EnvIntRange('WEBHOOK_RETENTION_DAYS', 1, 36500)
  WEBHOOK_RETENTION_DAYS = 30;

  /** Targets the outbound policy would refuse that the operator permits (libs/outbound: blocks and host names). */
  @ValidateBy(
    {
      name: 'outboundAllowList',
      validator: { validate: (value: unknown) => typeof value === 'string' && allowListError(value) === null },
    },
    { message: 'OUTBOUND_ALLOW_LIST must be a comma-separated list of address blocks (127.0.0.1/32) or host names' },
  )
  OUTBOUND_ALLOW_LIST = '';

  // The gateway's mail (threshold events, a disabled endpoint): SMTP_URL unset writes each mail to the log.
  @IsOptional()
  @Matches(/^smtps?:\/\//, { message: 'SMTP_URL must be an smtp:// or smtps:// URL' })
  SMTP_URL?: string = undefined;

  @IsString()
  // The portal's default too: one .env configures both apps (test/e2e/repository/env-example).
  MAIL_FROM = 'Pet store developer portal <portal@localhost>';

  // Usage as events for a billing system (issue #49, docs/usage-export.md): off unless a format is chosen.
  @IsIn(USAGE_EXPORT_FORMATS, { message: `USAGE_EVENTS_FORMAT must be one of ${USAGE_EXPORT_FORMATS.join(', ')}` })
  USAGE_EVENTS_FORMAT: UsageExportFormat = 'off';

  @IsOptional()
  @Matches(/^https?:\/\/[^\s]+$/, { message: 'USAGE_EVENTS_URL must be an http(s) URL' })
  USAGE_EVENTS_URL?: string = undefined;

  @IsOptional()
  @Matches(/^[^\s]+$/, { message: 'USAGE_EVENTS_SOURCE must be a URI-reference (no spaces)' })
  USAGE_EVENTS_SOURCE?: string = undefined;

  @IsOptional()
  @Matches(/^[A-Za-z0-9._:-]{1,100}$/, {
    message: 'USAGE_EVENTS_NAME must be 1 to 100 letters, digits, dots, colons, underscores or hyphens',
  })
  USAGE_EVENTS_NAME?: string = undefined;

  @IsOptional()
  @IsString()
  USAGE_EVENTS_CUSTOMERS_FILE?: string = undefined;

  @IsOptional()
  @IsString()
  USAGE_EVENTS_CUSTOMER_TEMPLATE?: string = undefined;

  @IsIn(['count', 'credits'], { message: 'USAGE_EVENTS_STRIPE_VALUE must be count or credits' })
  USAGE_EVENTS_STRIPE_VALUE: 'count' | 'credits' = 'count';

  @IsString()
  USAGE_EVENTS_STRIPE_OUTCOMES = 'ok';

  @EnvIntRange('USAGE_EVENTS_SETTLE_MS', 1000, 86400000)
  USAGE_EVENTS_SETTLE_MS = 60000;

  @IsOptional()
  @Matches(/^[\x21-\x7e]{1,1000}$/, { message: 'USAGE_EVENTS_TOKEN must be 1 to 1000 visible ASCII characters' })
  USAGE_EVENTS_TOKEN?: string = undefined;

  @IsString()
  USAGE_EVENTS_ALLOW_LIST = '';

  @EnvIntRange('USAGE_EVENTS_INTERVAL_MS', 100, 3600000)
  USAGE_EVENTS_INTERVAL_MS = 10000;

  @EnvIntRange('USAGE_EVENTS_RETRY_MAX_MS', 100, 86400000)
  USAGE_EVENTS_RETRY_MAX_MS = 600000;
  // OAuth 2.0 access tokens on /v1 (issue #50, docs/oauth.md): the issuers trusted, as JSON; unset: keys only.
  @IsOptional()
  @IsString()
  OAUTH_ISSUERS?: string = undefined;

  @EnvIntRange('OAUTH_TOKEN_CACHE_SIZE', 100, 10000000)
  OAUTH_TOKEN_CACHE_SIZE = 100000;

  // Operators' sign-in to the console with their company's identity provider (issue #51, docs/sso.md): all three
  // or none.
  @IsOptional()
  @IsString()
  ADMIN_OIDC_ISSUER?: string = undefined;

  /** The console's client id at that provider: the `aud` of the ID tokens the gateway takes. */
  @IsOptional()
  @IsString()
  ADMIN_OIDC_AUDIENCE?: string = undefined;

  /** JSON: role (a value of the roles claim) → {"scopes": [...] or "all", "plans"?: [...]}. */
  @IsOptional()
  @IsString()
  ADMIN_OIDC_ROLES?: string = undefined;

  @Matches(/^[A-Za-z0-9_:./-]{1,100}$/, { message: 'ADMIN_OIDC_ROLES_CLAIM must be a claim name' })
  ADMIN_OIDC_ROLES_CLAIM = 'groups';

  /** How long a signed-in person's admin token lives: the bound for a role removed at the provider. */
  @EnvIntRange('ADMIN_OIDC_SESSION_MINUTES', 1, 60)
  ADMIN_OIDC_SESSION_MINUTES = 15;

  // --- end of the control plane ---

  @IsOptional()
  @Matches(/^rediss?:\/\//, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL?: string = undefined;

  @IsString()
  REDIS_KEY_PREFIX = 'petstore:';

  @EnvIntRange('REDIS_COMMAND_TIMEOUT_MS', 1, 60000)
  REDIS_COMMAND_TIMEOUT_MS = 2000;

  @EnvIntRange('ANON_RATE_LIMIT_PER_MINUTE', 1, 1000000)
  ANON_RATE_LIMIT_PER_MINUTE = 30;

  @EnvIntRange('BAN_THRESHOLD', 1, 1000000)
  BAN_THRESHOLD = 20;

  @EnvIntRange('BAN_DURATION_SECONDS', 1, 86400)
  BAN_DURATION_SECONDS = 600;

  @EnvTrustProxy('TRUST_PROXY')
  TRUST_PROXY = 'false';

  // Rate limits under pressure (issue #10): outage policy, grace before strikes, bound of in-process counters.
  @IsIn(['open', 'closed'], { message: 'RATE_LIMIT_FAILURE_MODE must be open or closed' })
  RATE_LIMIT_FAILURE_MODE: 'open' | 'closed' = 'open';

  @EnvIntRange('BAN_GRACE_MS', 0, 3600000)
  BAN_GRACE_MS = 5000;

  @EnvIntRange('RATE_LIMIT_MEMORY_MAX_TRACKERS', 100, 100000000)
  RATE_LIMIT_MEMORY_MAX_TRACKERS = 100000;

  // The in-process counters kept across a restart (npm start sets .data/rate-limits.json); unset: a restart forgets them.
  @IsOptional()
  @IsString()
  @MinLength(1, { message: 'RATE_LIMIT_STATE_FILE must be a file path (or unset)' })
  RATE_LIMIT_STATE_FILE?: string = undefined;

  // Redis Cluster, Sentinel, TLS and credentials (issue #14): at most one of REDIS_URL, REDIS_CLUSTER_NODES,
  // REDIS_SENTINELS (checked in redisConnectionFromEnvironment).
  @IsOptional()
  @RedisNodeList('REDIS_CLUSTER_NODES')
  REDIS_CLUSTER_NODES?: string = undefined;

  @IsOptional()
  @RedisNodeList('REDIS_SENTINELS')
  REDIS_SENTINELS?: string = undefined;

  @IsOptional()
  @Matches(/^[A-Za-z0-9._-]{1,128}$/, {
    message: 'REDIS_SENTINEL_NAME must be a master name such as mymaster (letters, digits, . _ -)',
  })
  REDIS_SENTINEL_NAME?: string = undefined;

  @IsOptional()
  @IsString()
  REDIS_USERNAME?: string = undefined;

  @IsOptional()
  @IsString()
  REDIS_PASSWORD?: string = undefined;

  @IsOptional()
  @IsString()
  REDIS_SENTINEL_USERNAME?: string = undefined;

  @IsOptional()
  @IsString()
  REDIS_SENTINEL_PASSWORD?: string = undefined;

  @EnvBoolean()
  @IsBoolean({ message: 'REDIS_TLS must be true or false' })
  REDIS_TLS = false;

  @Matches(/^https:\/\/[^\s]+\/v1$/, { message: 'PUBLIC_URL_PRODUCTION must be an https URL ending in /v1' })
  PUBLIC_URL_PRODUCTION = 'https://api.petstore.example.com/v1';

  @Matches(/^https:\/\/[^\s]+\/v1$/, { message: 'PUBLIC_URL_STAGING must be an https URL ending in /v1' })
  PUBLIC_URL_STAGING = 'https://staging-api.petstore.example.com/v1';

  /**
   * The origin clients reach the API at, for the absolute links the gateway writes (a listing's next page). Unset:
   * those links are relative (`</v1/pets?...>`). Never taken from a request's Host or X-Forwarded-Host.
   */
  @IsOptional()
  @Matches(/^https?:\/\/(?:[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?$/, {
    message: 'PUBLIC_ORIGIN must be an http(s) origin without a path, such as https://api.petstore.example.com',
  })
  PUBLIC_ORIGIN?: string = undefined;

  @IsOptional()
  @EnvBoolean()
  @IsBoolean({ message: 'DEMO_KEY must be true or false' })
  DEMO_KEY?: boolean = undefined;

  @IsOptional()
  @Matches(/^https?:\/\/[^\s,]+(,https?:\/\/[^\s,]+)*$/, {
    message: 'CORS_ORIGINS must be a comma-separated list of http(s) origins',
  })
  CORS_ORIGINS?: string = undefined;

  /**
   * The host names the public port answers (besides loopback names, and PUBLIC_ORIGIN's host): any other Host is
   * refused with 400 before the app sees it (DNS rebinding, issue #45.7).
   */
  @EnvHostList('ALLOWED_HOSTS')
  ALLOWED_HOSTS = '';

  /** The host names the admin API answers besides loopback names (compose: the service name, `gateway`). */
  @EnvHostList('ADMIN_ALLOWED_HOSTS')
  ADMIN_ALLOWED_HOSTS = '';
}

/** A host list variable, already validated by EnvHostList. */
function hostList(value: string, name: string): string[] {
  const parsed = parseAllowedHosts(value, name);
  return typeof parsed === 'string' ? [] : parsed;
}

/** The validated, typed settings of the gateway. Tests build one directly. */
export interface GatewayConfig {
  port: number;
  host: string;
  petsUrl: string;
  upstream: { timeoutMs: number; connectTimeoutMs: number; connections: number };
  plansFile: string;
  /** Control plane: where consumers and keys live, how the data plane caches them, the admin API. */
  consumers: {
    /** Absent: an embedded PGlite under `pgliteDataDir`. */
    databaseUrl?: string;
    schema: string;
    pgliteDataDir: string;
    poolSize: number;
    migrateOnStart: boolean;
    /** Most active (neither revoked nor expired) keys one consumer may hold: issue, rotation and import stop there. */
    maxKeys: number;
    cache: {
      size: number;
      ttlMs: number;
      negativeSize: number;
      negativeTtlMs: number;
      /** Queries a second for keys not cached (KEY_LOOKUPS_PER_SECOND), each of up to `lookupBatchSize` hashes. */
      lookupsPerSecond: number;
      lookupBatchSize: number;
      filterRebuildMs: number;
    };
  };
  admin: {
    port: number;
    host: string;
    /** Required in production; in development main.ts keeps a generated one in `tokenFile`. */
    token?: string;
    tokenFile: string;
    /** Audit-log rows older than this are deleted in batches (AUDIT_RETENTION_DAYS). */
    auditRetentionDays: number;
    /** The host names the admin API answers besides loopback names (ADMIN_ALLOWED_HOSTS). */
    allowedHosts: readonly string[];
  };
  /** Usage history: whether answers are recorded, how often a batch is written, the bound held, how long rows live. */
  usage: {
    enabled: boolean;
    flushMs: number;
    maxBuckets: number;
    retentionDays: number;
    /** The per-minute rows (usage_minutely): the minute cells held at most, and how long the rows live. */
    maxMinuteCells: number;
    minuteRetentionDays: number;
    /**
     * The CSV export: at most `concurrency` at once on this instance (more: 503); a client that leaves a page
     * unread for `writeTimeoutMs`, or an export past `timeoutMs` (its query included), is cut off.
     */
    export: { concurrency: number; writeTimeoutMs: number; timeoutMs: number };
    /** Usage as events for a billing system (USAGE_EVENTS_*; docs/usage-export.md). */
    events: UsageExportConfig;
  };
  /**
   * Threshold events (docs/alerts.md): the shares of a day or month window that raise one (`windowThresholds`,
   * ascending fractions: 0.8 for 80 %), the credit balance called low (`creditsLowBalance`; 0: only the balance
   * reaching 0 raises one), how often the queued events are written, and how often each instance reconciles.
   */
  alerts: {
    enabled: boolean;
    windowThresholds: readonly number[];
    creditsLowBalance: number;
    flushMs: number;
    reconcileMs: number;
    /** A threshold event is deleted this long after its period ended (ALERT_EVENT_RETENTION_DAYS). */
    eventRetentionDays: number;
  };
  /**
   * Webhooks (docs/webhooks.md): whether this instance runs the delivery worker, how often it looks for due
   * deliveries, an attempt's deadline, attempts at once on this instance, endpoints per consumer, how long an
   * endpoint may fail before it is disabled, and the outbound policy's allow-list (HTTPS required in production).
   */
  webhooks: {
    enabled: boolean;
    pollMs: number;
    timeoutMs: number;
    concurrency: number;
    maxEndpoints: number;
    disableAfterMs: number;
    allowList: string;
    /** Finished deliveries, their attempts and fanned-out outbox messages older than this are deleted. */
    retentionDays: number;
  };
  /** The gateway's mail: SMTP_URL (unset: written to the log) and the sender. */
  mail: { smtpUrl?: string; from: string };
  /** The identity providers whose access tokens /v1 takes, and the bound of the verified tokens held (docs/oauth.md). */
  oauth: OAuthConfig;
  /** The identity provider operators sign in to the console with (docs/sso.md); undefined: none. */
  adminOidc?: AdminOidcConfig;
  /** Shared counters: where Redis is (one server, a Cluster or Sentinel), with TLS and credentials. */
  redis?: { connection: RedisConnectionConfig; keyPrefix: string; commandTimeoutMs: number };
  rateLimit: {
    anonymousPerMinute: number;
    banThreshold: number;
    banDurationMs: number;
    /** After a window's first 429, refusals within this time are not strikes (the client could not know yet). */
    banGraceMs: number;
    /** Redis gone: `open` decides on in-process counters, `closed` answers 503. */
    failureMode: 'open' | 'closed';
    /** Most trackers the in-process counters hold; the least recently seen is evicted beyond it. */
    memoryMaxTrackers: number;
    /** Where the in-process counters are written at shutdown and read at start (without Redis); unset: not kept. */
    stateFile?: string;
    /** Window lengths; fixed by the plans (a minute, a day), shorter only in tests. */
    windowMs: { minute: number; day: number };
  };
  /** Express's `trust proxy` setting: false, a hop count, or addresses/subnets (never `true`). */
  trustProxy: false | number | string;
  publicUrls: { production: string; staging: string };
  /** Origin of the absolute links the gateway writes (`https://api.example.com`); absent: relative links. */
  publicOrigin?: string;
  demoKey: boolean;
  production: boolean;
  logLevel: LogLevelName;
  /** How long in-flight requests may take to finish after SIGTERM. */
  shutdownGraceMs: number;
  /** Sent to the pets service on every request when set. */
  internalSecret?: string;
  /** Prometheus metrics: a port of their own, not published through the balancer. */
  metrics: { port: number; host: string };
  /** Browser origins allowed by CORS; empty: CORS off. */
  corsOrigins: string[];
  /**
   * The host names the public port answers besides loopback names (ALLOWED_HOSTS, and PUBLIC_ORIGIN's host); the
   * rest get 400 before the app (libs/platform host-allow-list.ts).
   */
  allowedHosts: readonly string[];
  /** Keep-alive, header and request timeouts of the public server (KEEP_ALIVE_TIMEOUT_MS...). */
  http: HttpServerLimits;
}

/** Without PETS_URL, the pets service on this machine at PETS_PORT (which then cannot be 0, "any free port"). */
function petsUrlFromPort(port: number): string {
  if (port === 0) throw new ConfigurationError('Invalid configuration: PETS_URL must be set when PETS_PORT is 0');
  return `http://127.0.0.1:${port}`;
}

/** Words a person would build an admin token from: zxcvbn counts them as known (docs/configuration.md). */
const ADMIN_TOKEN_WORDS = ['admin', 'token', 'petstore', 'pet store', 'gateway', 'root'];

export function loadGatewayConfig(env: Record<string, string | undefined> = process.env): GatewayConfig {
  const e = loadEnvironment(GatewayEnvironment, env);
  const production = e.NODE_ENV === 'production';
  if (production && (!e.ADMIN_TOKEN || e.ADMIN_TOKEN.startsWith('change-me'))) {
    throw new ConfigurationError(
      'Invalid configuration: ADMIN_TOKEN must be set in production, not a placeholder (the admin API refuses to start without it)',
    );
  }
  const strength = production ? secretStrength(e.ADMIN_TOKEN!, ADMIN_TOKEN_WORDS) : undefined;
  if (strength && strength.bits < MIN_SECRET_BITS) {
    // The estimate and what made it weak, never the token itself.
    throw new ConfigurationError(
      `Invalid configuration: ADMIN_TOKEN is too weak for production (about ${strength.bits} bits, at least ${MIN_SECRET_BITS}: ${strength.weakness}): use a random one, e.g. openssl rand -hex 32`,
    );
  }
  const redisConnection = redisConnectionFromEnvironment(e);
  return {
    port: e.PORT,
    host: e.HOST,
    petsUrl: e.PETS_URL ?? petsUrlFromPort(e.PETS_PORT),
    upstream: {
      timeoutMs: e.UPSTREAM_TIMEOUT_MS,
      connectTimeoutMs: e.UPSTREAM_CONNECT_TIMEOUT_MS,
      connections: e.UPSTREAM_CONNECTIONS,
    },
    plansFile: e.PLANS_FILE,
    consumers: {
      databaseUrl: e.GATEWAY_DATABASE_URL,
      schema: e.GATEWAY_DB_SCHEMA,
      pgliteDataDir: e.GATEWAY_PGLITE_DATA_DIR,
      poolSize: e.GATEWAY_DB_POOL_SIZE,
      migrateOnStart: e.GATEWAY_DB_MIGRATE_ON_START ?? true,
      maxKeys: e.CONSUMER_MAX_KEYS,
      cache: {
        size: e.KEY_CACHE_SIZE,
        ttlMs: e.KEY_CACHE_TTL_MS,
        negativeSize: e.KEY_NEGATIVE_CACHE_SIZE,
        negativeTtlMs: e.KEY_NEGATIVE_CACHE_TTL_MS,
        lookupsPerSecond: e.KEY_LOOKUPS_PER_SECOND,
        lookupBatchSize: e.KEY_LOOKUP_BATCH_SIZE,
        filterRebuildMs: e.KEY_FILTER_REBUILD_MS,
      },
    },
    admin: {
      port: e.ADMIN_PORT,
      host: e.ADMIN_HOST,
      token: e.ADMIN_TOKEN,
      tokenFile: e.ADMIN_TOKEN_FILE,
      auditRetentionDays: e.AUDIT_RETENTION_DAYS,
      allowedHosts: hostList(e.ADMIN_ALLOWED_HOSTS, 'ADMIN_ALLOWED_HOSTS'),
    },
    usage: {
      enabled: e.USAGE_ENABLED,
      flushMs: e.USAGE_FLUSH_MS,
      maxBuckets: e.USAGE_MAX_BUCKETS,
      retentionDays: e.USAGE_RETENTION_DAYS,
      maxMinuteCells: e.USAGE_MAX_MINUTE_CELLS,
      minuteRetentionDays: e.USAGE_MINUTE_RETENTION_DAYS,
      export: {
        concurrency: e.USAGE_EXPORT_CONCURRENCY,
        writeTimeoutMs: e.USAGE_EXPORT_WRITE_TIMEOUT_MS,
        timeoutMs: e.USAGE_EXPORT_TIMEOUT_MS,
      },
      events: usageExportConfigOf(e),
    },
    alerts: {
      enabled: e.ALERTS_ENABLED,
      windowThresholds: [...new Set(e.ALERT_THRESHOLDS_PERCENT.split(',').map(Number))]
        .sort((a, b) => a - b)
        .map((percent) => percent / 100),
      creditsLowBalance: e.ALERT_CREDITS_LOW_BALANCE,
      flushMs: e.ALERT_FLUSH_MS,
      reconcileMs: e.ALERT_RECONCILE_MS,
      eventRetentionDays: e.ALERT_EVENT_RETENTION_DAYS,
    },
    webhooks: {
      enabled: e.WEBHOOKS_ENABLED,
      pollMs: e.WEBHOOK_POLL_MS,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      concurrency: e.WEBHOOK_CONCURRENCY,
      maxEndpoints: e.WEBHOOK_MAX_ENDPOINTS,
      disableAfterMs: e.WEBHOOK_DISABLE_AFTER_MS,
      allowList: e.OUTBOUND_ALLOW_LIST,
      retentionDays: e.WEBHOOK_RETENTION_DAYS,
    },
    mail: { smtpUrl: e.SMTP_URL, from: e.MAIL_FROM },
    oauth: oauthConfigOf(e.OAUTH_ISSUERS, e.OAUTH_TOKEN_CACHE_SIZE, production),
    adminOidc: adminOidcConfigOf(e, production),
    redis: redisConnection
      ? { connection: redisConnection, keyPrefix: e.REDIS_KEY_PREFIX, commandTimeoutMs: e.REDIS_COMMAND_TIMEOUT_MS }
      : undefined,
    rateLimit: {
      anonymousPerMinute: e.ANON_RATE_LIMIT_PER_MINUTE,
      banThreshold: e.BAN_THRESHOLD,
      banDurationMs: e.BAN_DURATION_SECONDS * 1000,
      banGraceMs: e.BAN_GRACE_MS,
      failureMode: e.RATE_LIMIT_FAILURE_MODE,
      memoryMaxTrackers: e.RATE_LIMIT_MEMORY_MAX_TRACKERS,
      stateFile: e.RATE_LIMIT_STATE_FILE,
      windowMs: { minute: 60_000, day: 86_400_000 },
    },
    trustProxy: expressTrustProxy(e.TRUST_PROXY),
    publicUrls: { production: e.PUBLIC_URL_PRODUCTION, staging: e.PUBLIC_URL_STAGING },
    publicOrigin: e.PUBLIC_ORIGIN,
    demoKey: (e.DEMO_KEY ?? true) && !production,
    production,
    logLevel: e.LOG_LEVEL,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    internalSecret: e.INTERNAL_SECRET,
    metrics: { port: e.METRICS_PORT, host: e.METRICS_HOST },
    corsOrigins: e.CORS_ORIGINS ? e.CORS_ORIGINS.split(',') : [],
    allowedHosts: [
      ...hostList(e.ALLOWED_HOSTS, 'ALLOWED_HOSTS'),
      ...[hostOfUrl(e.PUBLIC_ORIGIN)].filter((host): host is string => host !== undefined),
    ],
    http: httpServerLimitsOf(e),
  };
}

export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');
