/**
 * Starts the stack: the pets service, GATEWAY_INSTANCES gateways sharing Redis and the consumers database, and
 * nginx in front of them. A start that fails at any step stops whatever it had started (and drops the database
 * it created) before it rejects, with a StackError that says what failed in one line.
 */
const { randomBytes } = require('node:crypto');
const { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { appNodeOptions } = require('../app-node-options');
const { migrate, prepareDatabase } = require('./database');
const { ensureLocalServices } = require('./local-services');
const { nginxConfig } = require('./nginx-config');
const { assertPortsFree } = require('./ports');
const { StackProcesses } = require('./processes');
const { waitReady } = require('./readiness');
const { deleteKeysWithPrefix } = require('./redis-keys');
const { LOOPBACK, readStackSettings } = require('./settings');
const { StackError } = require('./stack-error');

const ROOT = path.join(__dirname, '../..');
const PETS_MAIN = path.join(ROOT, 'dist/apps/pets/apps/pets/src/main.js');
const GATEWAY_MAIN = path.join(ROOT, 'dist/apps/gateway/apps/gateway/src/main.js');
const PORTAL_MAIN = path.join(ROOT, 'dist/apps/portal/apps/portal/src/main.js');
const MIGRATE = path.join(ROOT, 'dist/apps/pets/apps/pets/src/database/migrate.js');
const KEYS = path.join(ROOT, 'scripts/keys.js');

function readPid(file) {
  try {
    return Number(readFileSync(file, 'utf8').trim());
  } catch {
    return undefined;
  }
}

function requireBuild() {
  for (const file of [PETS_MAIN, GATEWAY_MAIN, MIGRATE]) {
    if (!existsSync(file)) throw new StackError(`${path.relative(ROOT, file)} is missing: run npm run build first`);
  }
}

/** nginx on the PATH, or where Debian installs it (/usr/sbin is not on every user's PATH). */
function nginxCommand() {
  const found = ['nginx', '/usr/sbin/nginx'].find((command) => !spawnSync(command, ['-v']).error);
  if (!found) throw new StackError('nginx is not installed (Debian: apt-get install nginx)');
  return found;
}

/**
 * Options (all optional): env (read instead of process.env, merged over it: the STACK_* variables and any app
 * variable), upstreamIdleSeconds (nginx's upstream keepalive_timeout, 60), interrupted (a promise that settles
 * with a signal name to abandon the start). Resolves with the stack's addresses and its stop function.
 */
async function startStack(options = {}) {
  const env = { ...process.env, ...options.env };
  const settings = readStackSettings(env);
  requireBuild();
  const nginxBinary = nginxCommand();
  await assertPortsFree(settings.ports, LOOPBACK);

  const processes = new StackProcesses();
  let database;
  const dirExisted = existsSync(settings.dir);
  // Everything the run made goes with it: its processes, its database, its Redis keys (the prefix it made, not one
  // the user chose) and STACK_DIR (when it made it; else the files it wrote there).
  const cleanUp = async () => {
    await processes.stopAll();
    await database?.drop();
    if (settings.redisUrl && settings.redisKeyPrefixIsOwn)
      await deleteKeysWithPrefix(settings.redisUrl, settings.redisKeyPrefix).catch((error) =>
        console.error(`stack: could not delete the Redis keys ${settings.redisKeyPrefix}*: ${error.message}`),
      );
    const written = dirExisted
      ? ['nginx.conf', 'nginx.pid', 'nginx-error.log', 'client-body', 'proxy', 'portal-session-secret'].map((name) =>
          path.join(settings.dir, name),
        )
      : [settings.dir];
    for (const file of written) rmSync(file, { recursive: true, force: true });
  };
  try {
    ensureLocalServices(settings);
    database = await prepareDatabase(settings);
    const adminToken = settings.adminToken ?? randomBytes(32).toString('base64url');
    // Production refuses the published development cursor secret: one per run unless the user gave theirs.
    const cursorSecret = env.CURSOR_SECRET ?? randomBytes(32).toString('hex');
    // Whatever else the user set (rate limits, timeouts...) reaches every app; what the stack sets comes last.
    const common = {
      ...env,
      NODE_OPTIONS: appNodeOptions(env.NODE_OPTIONS),
      NODE_ENV: 'production',
      LOG_LEVEL: settings.logLevel,
      CURSOR_SECRET: cursorSecret,
    };
    await migrate(MIGRATE, { ...common, DATABASE_URL: database.url }, settings.readyTimeoutMs);
    const ready = (what, url, notYet) =>
      waitReady({
        what,
        url,
        notYet,
        watched: processes.children,
        timeoutMs: settings.readyTimeoutMs,
        interrupted: options.interrupted,
      });

    const pets = processes.start('pets', process.execPath, [PETS_MAIN], {
      ...common,
      PETS_HOST: LOOPBACK,
      PETS_PORT: String(settings.pets.port),
      PETS_METRICS_PORT: String(settings.pets.metricsPort),
      DATABASE_URL: database.url,
    });
    await ready(
      `the pets service (STACK_PETS_PORT ${settings.pets.port})`,
      `http://${LOOPBACK}:${settings.pets.port}/health/ready`,
    );

    const gateways = settings.gateways.map((gateway) => ({
      ...gateway,
      process: processes.start(gateway.name, process.execPath, [GATEWAY_MAIN], {
        ...common,
        HOST: LOOPBACK,
        PORT: String(gateway.port),
        ADMIN_HOST: LOOPBACK,
        ADMIN_PORT: String(gateway.adminPort),
        ADMIN_TOKEN: adminToken,
        METRICS_PORT: String(gateway.metricsPort),
        PETS_URL: `http://${LOOPBACK}:${settings.pets.port}`,
        GATEWAY_DATABASE_URL: settings.gatewayDatabaseUrl ?? database.url,
        ...(settings.redisUrl ? { REDIS_URL: settings.redisUrl } : {}),
        REDIS_KEY_PREFIX: settings.redisKeyPrefix,
        TRUST_PROXY: settings.trustProxy,
        // Next-page links name the stack's public entry (nginx), never what a client wrote in Host.
        PUBLIC_ORIGIN: env.PUBLIC_ORIGIN ?? `http://${LOOPBACK}:${settings.port}`,
      }),
    }));
    for (const gateway of gateways) {
      await ready(
        `${gateway.name} (port ${gateway.port}, STACK_GATEWAY_PORT_BASE)`,
        `http://${LOOPBACK}:${gateway.port}/health/ready`,
      );
    }

    // The developer portal, when built: its admin token made through the first gateway's admin API (--for portal).
    let portal;
    if (existsSync(PORTAL_MAIN)) {
      const adminUrl = `http://${LOOPBACK}:${gateways[0].adminPort}`;
      const reply = await fetch(`${adminUrl}/tokens`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'portal', ...require('../keys.js').TOKEN_PRESETS.portal }),
      });
      if (!reply.ok)
        throw new StackError(`cannot create the developer portal's admin token: ${reply.status} ${await reply.text()}`);
      const entry = `http://${LOOPBACK}:${settings.port}`;
      portal = processes.start('portal', process.execPath, [PORTAL_MAIN], {
        ...common,
        // Production wants SMTP_URL: without it the portal runs as in development (each mail, its link, in the log).
        NODE_ENV: env.SMTP_URL ? 'production' : 'development',
        PORTAL_HOST: LOOPBACK,
        PORTAL_PORT: String(settings.portal.port),
        PORTAL_ADMIN_TOKEN: (await reply.json()).token,
        ADMIN_URL: adminUrl,
        PORTAL_DATABASE_URL: settings.gatewayDatabaseUrl ?? database.url,
        PORTAL_BASE_PATH: '/portal',
        PORTAL_PUBLIC_URL: env.PORTAL_PUBLIC_URL ?? entry,
        PORTAL_API_URL: env.PORTAL_API_URL ?? `${entry}/v1`,
        PORTAL_SESSION_SECRET: env.PORTAL_SESSION_SECRET ?? randomBytes(32).toString('hex'),
        PORTAL_DATA_DIR: settings.dir,
      });
      await ready(
        `the developer portal (STACK_PORTAL_PORT ${settings.portal.port})`,
        `http://${LOOPBACK}:${settings.portal.port}/health/ready`,
      );
    }

    for (const folder of ['client-body', 'proxy']) mkdirSync(path.join(settings.dir, folder), { recursive: true });
    const conf = path.join(settings.dir, 'nginx.conf');
    writeFileSync(
      conf,
      nginxConfig({
        dir: settings.dir,
        host: LOOPBACK,
        port: settings.port,
        gatewayPorts: gateways.map((g) => g.port),
        portalPort: portal ? settings.portal.port : undefined,
        upstreamIdleSeconds: options.upstreamIdleSeconds ?? 60,
      }),
    );
    const pidFile = path.join(settings.dir, 'nginx.pid');
    rmSync(pidFile, { force: true });
    const nginx = processes.start('nginx', nginxBinary, ['-p', settings.dir, '-c', conf, '-g', 'daemon off;'], env);
    // Whoever took STACK_PORT after the port check would answer too: nginx writes its pid file only once it has
    // bound its port, so the answer is nginx's once the file holds its pid.
    const notBoundYet = () =>
      readPid(pidFile) === nginx.pid ? undefined : `nginx has not bound 127.0.0.1:${settings.port} yet`;
    await ready(`nginx (STACK_PORT ${settings.port})`, `http://${LOOPBACK}:${settings.port}/docs-json`, notBoundYet);

    let stopping;
    processes.ready();
    return {
      url: `http://${LOOPBACK}:${settings.port}`,
      pets: { url: `http://${LOOPBACK}:${settings.pets.port}`, metricsPort: settings.pets.metricsPort, process: pets },
      gateways,
      portal: portal ? { url: `http://${LOOPBACK}:${settings.port}/portal/`, process: portal } : undefined,
      admin: { adminUrl: `http://${LOOPBACK}:${gateways[0].adminPort}`, adminToken },
      database: database.description,
      redis: { url: settings.redisUrl, keyPrefix: settings.redisKeyPrefix },
      dir: settings.dir,
      keysCli: KEYS,
      stop: () => (stopping ??= cleanUp()),
    };
  } catch (error) {
    await cleanUp();
    if (error instanceof StackError && processes.count > 0)
      error.message += `; stopped everything it had started (${processes.names().join(', ')})`;
    throw error;
  }
}

module.exports = { startStack };
