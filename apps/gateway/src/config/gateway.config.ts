import { EnvBoolean, EnvInteger, LOG_LEVELS, LogLevelName, loadEnvironment } from '@app/platform';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';

const port = (name: string) => `${name} must be a port number from 0 to 65535`;
const positive = (name: string, max: number) => `${name} must be an integer from 1 to ${max}`;

/** Every variable the gateway reads; the README's configuration table lists the same names and defaults. */
export class GatewayEnvironment {
  @EnvInteger()
  @IsInt({ message: port('PORT') })
  @Min(0, { message: port('PORT') })
  @Max(65535, { message: port('PORT') })
  PORT = 3000;

  @IsString()
  HOST = '0.0.0.0';

  @Matches(/^https?:\/\/[^/]+$/, { message: 'PETS_URL must be an http(s) origin such as http://127.0.0.1:3001' })
  PETS_URL = 'http://127.0.0.1:3001';

  @EnvInteger()
  @IsInt({ message: positive('UPSTREAM_TIMEOUT_MS', 600000) })
  @Min(1, { message: positive('UPSTREAM_TIMEOUT_MS', 600000) })
  @Max(600000, { message: positive('UPSTREAM_TIMEOUT_MS', 600000) })
  UPSTREAM_TIMEOUT_MS = 10000;

  @EnvInteger()
  @IsInt({ message: positive('UPSTREAM_CONNECT_TIMEOUT_MS', 60000) })
  @Min(1, { message: positive('UPSTREAM_CONNECT_TIMEOUT_MS', 60000) })
  @Max(60000, { message: positive('UPSTREAM_CONNECT_TIMEOUT_MS', 60000) })
  UPSTREAM_CONNECT_TIMEOUT_MS = 2000;

  @EnvInteger()
  @IsInt({ message: positive('UPSTREAM_CONNECTIONS', 1024) })
  @Min(1, { message: positive('UPSTREAM_CONNECTIONS', 1024) })
  @Max(1024, { message: positive('UPSTREAM_CONNECTIONS', 1024) })
  UPSTREAM_CONNECTIONS = 64;

  @IsString()
  PLANS_FILE = 'gateway/plans.json';

  @IsString()
  CONSUMERS_FILE = '.data/consumers.json';

  @EnvInteger()
  @IsInt({ message: positive('CONSUMERS_RELOAD_MS', 60000) })
  @Min(100, { message: 'CONSUMERS_RELOAD_MS must be an integer from 100 to 60000' })
  @Max(60000, { message: 'CONSUMERS_RELOAD_MS must be an integer from 100 to 60000' })
  CONSUMERS_RELOAD_MS = 1000;

  @IsOptional()
  @Matches(/^rediss?:\/\//, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL?: string = undefined;

  @IsString()
  REDIS_KEY_PREFIX = 'petstore:';

  @EnvInteger()
  @IsInt({ message: positive('REDIS_COMMAND_TIMEOUT_MS', 10000) })
  @Min(1, { message: positive('REDIS_COMMAND_TIMEOUT_MS', 10000) })
  @Max(10000, { message: positive('REDIS_COMMAND_TIMEOUT_MS', 10000) })
  REDIS_COMMAND_TIMEOUT_MS = 250;

  @EnvInteger()
  @IsInt({ message: positive('ANON_RATE_LIMIT_PER_MINUTE', 1000000) })
  @Min(1, { message: positive('ANON_RATE_LIMIT_PER_MINUTE', 1000000) })
  @Max(1000000, { message: positive('ANON_RATE_LIMIT_PER_MINUTE', 1000000) })
  ANON_RATE_LIMIT_PER_MINUTE = 30;

  @EnvInteger()
  @IsInt({ message: positive('BAN_THRESHOLD', 1000000) })
  @Min(1, { message: positive('BAN_THRESHOLD', 1000000) })
  @Max(1000000, { message: positive('BAN_THRESHOLD', 1000000) })
  BAN_THRESHOLD = 20;

  @EnvInteger()
  @IsInt({ message: positive('BAN_DURATION_SECONDS', 86400) })
  @Min(1, { message: positive('BAN_DURATION_SECONDS', 86400) })
  @Max(86400, { message: positive('BAN_DURATION_SECONDS', 86400) })
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

  @IsIn(LOG_LEVELS, { message: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}` })
  LOG_LEVEL: LogLevelName = 'log';

  @IsIn(['development', 'production', 'test'], { message: 'NODE_ENV must be development, production or test' })
  NODE_ENV = 'development';
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
}

function parseTrustProxy(value: string): boolean | number | string {
  if (value === 'false' || value === '') return false;
  if (value === 'true') return true;
  if (/^[0-9]+$/.test(value)) return Number(value);
  return value;
}

export function loadGatewayConfig(env: Record<string, string | undefined> = process.env): GatewayConfig {
  const e = loadEnvironment(GatewayEnvironment, env);
  const production = e.NODE_ENV === 'production';
  return {
    port: e.PORT,
    host: e.HOST,
    petsUrl: e.PETS_URL,
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
  };
}

export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');
