import { CommonEnvironment, ConfigurationError, EnvBoolean, EnvIntRange, HttpServerLimits, LogLevelName, httpServerLimitsOf, loadEnvironment } from '@app/platform';
import { IsBoolean, IsOptional, IsString, Matches } from 'class-validator';

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

  @IsString()
  CONSUMERS_FILE = '.data/consumers.json';

  @EnvIntRange('CONSUMERS_RELOAD_MS', 100, 60000)
  CONSUMERS_RELOAD_MS = 1000;

  @IsOptional()
  @Matches(/^rediss?:\/\//, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL?: string = undefined;

  @IsString()
  REDIS_KEY_PREFIX = 'petstore:';

  @EnvIntRange('REDIS_COMMAND_TIMEOUT_MS', 1, 10000)
  REDIS_COMMAND_TIMEOUT_MS = 250;

  @EnvIntRange('ANON_RATE_LIMIT_PER_MINUTE', 1, 1000000)
  ANON_RATE_LIMIT_PER_MINUTE = 30;

  @EnvIntRange('BAN_THRESHOLD', 1, 1000000)
  BAN_THRESHOLD = 20;

  @EnvIntRange('BAN_DURATION_SECONDS', 1, 86400)
  BAN_DURATION_SECONDS = 600;

  @IsString()
  TRUST_PROXY = 'false';

  @Matches(/^https:\/\/[^\s]+\/v1$/, { message: 'PUBLIC_URL_PRODUCTION must be an https URL ending in /v1' })
  PUBLIC_URL_PRODUCTION = 'https://api.petstore.example.com/v1';

  @Matches(/^https:\/\/[^\s]+\/v1$/, { message: 'PUBLIC_URL_STAGING must be an https URL ending in /v1' })
  PUBLIC_URL_STAGING = 'https://staging-api.petstore.example.com/v1';

  @IsOptional()
  @EnvBoolean()
  @IsBoolean({ message: 'DEMO_KEY must be true or false' })
  DEMO_KEY?: boolean = undefined;

  @IsOptional()
  @Matches(/^https?:\/\/[^\s,]+(,https?:\/\/[^\s,]+)*$/, { message: 'CORS_ORIGINS must be a comma-separated list of http(s) origins' })
  CORS_ORIGINS?: string = undefined;
}

/** The validated, typed settings of the gateway. Tests build one directly. */
export interface GatewayConfig {
  port: number;
  host: string;
  petsUrl: string;
  upstream: { timeoutMs: number; connectTimeoutMs: number; connections: number };
  plansFile: string;
  consumersFile: string;
  consumersReloadMs: number;
  redis?: { url: string; keyPrefix: string; commandTimeoutMs: number };
  rateLimit: {
    anonymousPerMinute: number;
    banThreshold: number;
    banDurationMs: number;
    /** Window lengths; fixed by the plans (a minute, a day), shorter only in tests. */
    windowMs: { minute: number; day: number };
  };
  /** Express's `trust proxy` setting: false, true, a hop count, or addresses/subnets. */
  trustProxy: boolean | number | string;
  publicUrls: { production: string; staging: string };
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
  /** Keep-alive, header and request timeouts of the public server (KEEP_ALIVE_TIMEOUT_MS...). */
  http: HttpServerLimits;
}

function parseTrustProxy(value: string): boolean | number | string {
  if (value === 'false' || value === '') return false;
  if (value === 'true') return true;
  if (/^[0-9]+$/.test(value)) return Number(value);
  return value;
}

/** Without PETS_URL, the pets service on this machine at PETS_PORT (which then cannot be 0, "any free port"). */
function petsUrlFromPort(port: number): string {
  if (port === 0) throw new ConfigurationError('Invalid configuration: PETS_URL must be set when PETS_PORT is 0');
  return `http://127.0.0.1:${port}`;
}

export function loadGatewayConfig(env: Record<string, string | undefined> = process.env): GatewayConfig {
  const e = loadEnvironment(GatewayEnvironment, env);
  const production = e.NODE_ENV === 'production';
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
    consumersFile: e.CONSUMERS_FILE,
    consumersReloadMs: e.CONSUMERS_RELOAD_MS,
    redis: e.REDIS_URL
      ? { url: e.REDIS_URL, keyPrefix: e.REDIS_KEY_PREFIX, commandTimeoutMs: e.REDIS_COMMAND_TIMEOUT_MS }
      : undefined,
    rateLimit: {
      anonymousPerMinute: e.ANON_RATE_LIMIT_PER_MINUTE,
      banThreshold: e.BAN_THRESHOLD,
      banDurationMs: e.BAN_DURATION_SECONDS * 1000,
      windowMs: { minute: 60_000, day: 86_400_000 },
    },
    trustProxy: parseTrustProxy(e.TRUST_PROXY),
    publicUrls: { production: e.PUBLIC_URL_PRODUCTION, staging: e.PUBLIC_URL_STAGING },
    demoKey: (e.DEMO_KEY ?? true) && !production,
    production,
    logLevel: e.LOG_LEVEL,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    internalSecret: e.INTERNAL_SECRET,
    metrics: { port: e.METRICS_PORT, host: e.METRICS_HOST },
    corsOrigins: e.CORS_ORIGINS ? e.CORS_ORIGINS.split(',') : [],
    http: httpServerLimitsOf(e),
  };
}

export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');
