/**
 * What `npm run stack` runs with, read from the environment: its own variables (docs/stack.md lists them, with
 * the same defaults) and the few app variables it honours. Refuses, with one line, what it cannot honour.
 */
const path = require('node:path');
const { StackError } = require('./stack-error');

const ROOT = path.join(__dirname, '../..');

/** The stack's own variables and their defaults. */
const DEFAULTS = {
  STACK_PORT: 8180,
  GATEWAY_INSTANCES: 2,
  STACK_PETS_PORT: 3300,
  STACK_PETS_METRICS_PORT: 3400,
  STACK_GATEWAY_PORT_BASE: 3301,
  STACK_ADMIN_PORT_BASE: 3351,
  STACK_METRICS_PORT_BASE: 3401,
  STACK_PORTAL_PORT: 3450,
  STACK_READY_TIMEOUT_MS: 60_000,
  STACK_POSTGRES_URL: 'postgres://postgres@127.0.0.1:5432/postgres',
  STACK_DIR: path.join(ROOT, '.data', 'stack'),
};

/**
 * App variables the stack sets to a value of its own for each instance: several gateways cannot share one PORT,
 * and the pets service it starts is the one the gateways must reach. Set in the environment, they would be
 * overridden, so they are refused, naming the variable to use instead.
 */
const REPLACED = {
  PORT: 'STACK_GATEWAY_PORT_BASE (gateway i listens on STACK_GATEWAY_PORT_BASE + i - 1)',
  ADMIN_PORT: "STACK_ADMIN_PORT_BASE (gateway i's admin API listens on STACK_ADMIN_PORT_BASE + i - 1)",
  METRICS_PORT: "STACK_METRICS_PORT_BASE (gateway i's metrics listen on STACK_METRICS_PORT_BASE + i - 1)",
  PETS_PORT: 'STACK_PETS_PORT',
  PETS_METRICS_PORT: 'STACK_PETS_METRICS_PORT',
  PETS_URL: 'STACK_PETS_PORT (the gateways call the pets service the stack starts)',
  PORTAL_PORT: 'STACK_PORTAL_PORT',
};

/** Listen addresses the stack keeps on loopback: nginx on STACK_PORT is its only entry, the admin APIs stay private. */
const LOOPBACK = '127.0.0.1';
const LOOPBACK_ONLY = ['HOST', 'ADMIN_HOST', 'PETS_HOST', 'PORTAL_HOST'];

/** An environment value, with the empty string read as unset (`PORT= npm run stack`). */
function variable(env, name) {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

function integer(env, name, min, max) {
  const raw = variable(env, name);
  if (raw === undefined) return DEFAULTS[name];
  if (!/^[0-9]+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new StackError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function refuseWhatTheStackSets(env) {
  for (const [name, instead] of Object.entries(REPLACED)) {
    if (variable(env, name) !== undefined) {
      throw new StackError(
        `${name} is set (${env[name]}), but the stack sets it for each app it starts: unset it and use ${instead}`,
      );
    }
  }
  for (const name of LOOPBACK_ONLY) {
    const value = variable(env, name);
    if (value !== undefined && value !== LOOPBACK) {
      throw new StackError(
        `${name} is set (${value}), but the stack binds its apps to ${LOOPBACK} behind nginx (STACK_PORT is its only entry): unset ${name}`,
      );
    }
  }
}

/** The ports of one gateway instance, numbered from 1. */
function gatewayPorts(bases, instance) {
  return {
    port: bases.gateway + instance - 1,
    adminPort: bases.admin + instance - 1,
    metricsPort: bases.metrics + instance - 1,
  };
}

/**
 * Every port the stack will listen on, each with the variable that sets it and what listens there; refuses
 * ranges that leave 1-65535 or overlap.
 */
function portPlan(settings) {
  const plan = [
    { port: settings.port, variable: 'STACK_PORT', what: "nginx, the stack's entry" },
    { port: settings.pets.port, variable: 'STACK_PETS_PORT', what: 'the pets service' },
    { port: settings.pets.metricsPort, variable: 'STACK_PETS_METRICS_PORT', what: "the pets service's metrics" },
    { port: settings.portal.port, variable: 'STACK_PORTAL_PORT', what: 'the developer portal' },
  ];
  for (const gateway of settings.gateways) {
    plan.push(
      { port: gateway.port, variable: 'STACK_GATEWAY_PORT_BASE', what: `${gateway.name}` },
      { port: gateway.adminPort, variable: 'STACK_ADMIN_PORT_BASE', what: `${gateway.name}'s admin API` },
      { port: gateway.metricsPort, variable: 'STACK_METRICS_PORT_BASE', what: `${gateway.name}'s metrics` },
    );
  }
  const seen = new Map();
  for (const entry of plan) {
    if (entry.port > 65535)
      throw new StackError(
        `${entry.variable} gives ${entry.what} port ${entry.port}, beyond 65535: choose a lower value`,
      );
    const other = seen.get(entry.port);
    if (other) {
      throw new StackError(
        `${entry.variable} and ${other.variable} both give port ${entry.port} (${entry.what}, ${other.what}): choose ranges that do not overlap`,
      );
    }
    seen.set(entry.port, entry);
  }
  return plan;
}

/** Reads and checks the stack's settings; throws a StackError naming the variable at fault. */
function readStackSettings(env = process.env) {
  refuseWhatTheStackSets(env);
  const instances = integer(env, 'GATEWAY_INSTANCES', 1, 32);
  const bases = {
    gateway: integer(env, 'STACK_GATEWAY_PORT_BASE', 1, 65535),
    admin: integer(env, 'STACK_ADMIN_PORT_BASE', 1, 65535),
    metrics: integer(env, 'STACK_METRICS_PORT_BASE', 1, 65535),
  };
  const run = `stack_${Date.now()}_${process.pid}`;
  const clusterOrSentinels =
    variable(env, 'REDIS_CLUSTER_NODES') !== undefined || variable(env, 'REDIS_SENTINELS') !== undefined;
  const settings = {
    run,
    port: integer(env, 'STACK_PORT', 1, 65535),
    pets: {
      port: integer(env, 'STACK_PETS_PORT', 1, 65535),
      metricsPort: integer(env, 'STACK_PETS_METRICS_PORT', 1, 65535),
    },
    portal: { port: integer(env, 'STACK_PORTAL_PORT', 1, 65535) },
    gateways: Array.from({ length: instances }, (_, i) => ({
      name: `gateway-${i + 1}`,
      ...gatewayPorts(bases, i + 1),
    })),
    readyTimeoutMs: integer(env, 'STACK_READY_TIMEOUT_MS', 1000, 3_600_000),
    dir: path.resolve(variable(env, 'STACK_DIR') ?? DEFAULTS.STACK_DIR),
    /** Set: the stack's apps use it as it is. Unset: a fresh database on STACK_POSTGRES_URL's server. */
    databaseUrl: variable(env, 'DATABASE_URL'),
    postgresUrl: variable(env, 'STACK_POSTGRES_URL') ?? DEFAULTS.STACK_POSTGRES_URL,
    gatewayDatabaseUrl: variable(env, 'GATEWAY_DATABASE_URL'),
    /** Unset with a Redis Cluster or Sentinels configured: the gateways read those instead. */
    redisUrl: variable(env, 'REDIS_URL') ?? (clusterOrSentinels ? undefined : 'redis://127.0.0.1:6379'),
    /** One prefix for every instance (they share the counters); a fresh one per run unless set. */
    redisKeyPrefix: variable(env, 'REDIS_KEY_PREFIX') ?? `${run}:`,
    /** The stack made the prefix (REDIS_KEY_PREFIX unset): its keys are deleted when the stack stops. */
    redisKeyPrefixIsOwn: variable(env, 'REDIS_KEY_PREFIX') === undefined,
    adminToken: variable(env, 'ADMIN_TOKEN'),
    trustProxy: variable(env, 'TRUST_PROXY') ?? 'loopback',
    logLevel: variable(env, 'LOG_LEVEL') ?? 'warn',
  };
  settings.ports = portPlan(settings);
  return settings;
}

module.exports = { DEFAULTS, LOOPBACK, readStackSettings };
