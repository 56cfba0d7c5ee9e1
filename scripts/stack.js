#!/usr/bin/env node
/**
 * `npm run stack`: the docker-compose topology without Docker. The pets service, several gateway instances
 * (GATEWAY_INSTANCES, default 2) sharing Redis and the consumers database, and nginx in front of them as the only
 * public port (STACK_PORT, default 8080), against this machine's PostgreSQL and Redis (started if they are
 * down; a fresh database unless DATABASE_URL is set). Everything it started stops on Ctrl-C or SIGTERM.
 * Needs `npm run build` first and nginx on the PATH (Debian: apt-get install nginx).
 */
const { spawn, execSync } = require('node:child_process');
const { appNodeOptions } = require('./app-node-options');
const { LOCAL_POSTGRES_URL, ensureLocalServices } = require('./local-services');
const { createThrowawayDatabase } = require('./throwaway-database');
const { waitForHttp } = require('./wait');
const { randomBytes } = require('node:crypto');
const { mkdirSync, writeFileSync, existsSync } = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const PETS_MAIN = path.join(ROOT, 'dist/apps/pets/apps/pets/src/main.js');
const GATEWAY_MAIN = path.join(ROOT, 'dist/apps/gateway/apps/gateway/src/main.js');
const MIGRATE = path.join(ROOT, 'dist/apps/pets/apps/pets/src/database/migrate.js');
const KEYS = path.join(ROOT, 'scripts/keys.js');

function nginxConfig(dir, port, gatewayPorts, upstreamIdleSeconds) {
  return `worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/nginx-error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/client-body;
  proxy_temp_path ${dir}/proxy;
  upstream gateways {
${gatewayPorts.map((p) => `    server 127.0.0.1:${p} max_fails=1 fail_timeout=5s;`).join('\n')}
    keepalive 32;
    # Below the gateways' KEEP_ALIVE_TIMEOUT_MS (75 s by default): nginx, not
    # the gateway, closes an idle connection, so a reused one is never being closed under a request.
    keepalive_timeout ${upstreamIdleSeconds}s;
  }
  server {
    listen 127.0.0.1:${port};
    client_max_body_size 16k;
    location /health/ { return 404; }
    location / {
      proxy_pass http://gateways;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $http_host;
      proxy_next_upstream error timeout http_502 http_503;
      proxy_next_upstream_tries 3;
      proxy_connect_timeout 2s;
      proxy_read_timeout 15s;
    }
  }
}
`;
}

/**
 * Starts the stack; resolves with its addresses and a stop function. Options (all optional): port, instances,
 * basePort (gateways take basePort+1.., pets basePort), databaseUrl, redisUrl, dir, env (extra variables),
 * upstreamIdleSeconds (nginx's upstream keepalive_timeout, 60).
 */
async function startStack(options = {}) {
  for (const file of [PETS_MAIN, GATEWAY_MAIN, MIGRATE]) {
    if (!existsSync(file)) throw new Error(`${path.relative(ROOT, file)} is missing: run npm run build first`);
  }
  ensureLocalServices();
  const port = options.port ?? Number(process.env.STACK_PORT ?? 8080);
  const instances = options.instances ?? Number(process.env.GATEWAY_INSTANCES ?? 2);
  const basePort = options.basePort ?? 3300;
  const dir = options.dir ?? path.join(ROOT, '.data', 'stack');
  mkdirSync(dir, { recursive: true });
  const run = `stack_${Date.now()}_${process.pid}`;
  const children = [];
  let ownDatabase;

  let databaseUrl = options.databaseUrl ?? process.env.DATABASE_URL;
  if (!databaseUrl) {
    ownDatabase = await createThrowawayDatabase(LOCAL_POSTGRES_URL, 'stack');
    databaseUrl = ownDatabase.url;
  }
  const redisUrl = options.redisUrl ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  // Each gateway's admin API on loopback (basePort + 50 + i), never in the nginx upstreams below.
  const adminToken = options.adminToken ?? randomBytes(32).toString('base64url');
  const common = { ...process.env, NODE_OPTIONS: appNodeOptions(), NODE_ENV: 'production', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn', ...options.env };
  execSync(`node ${MIGRATE}`, { env: { ...common, DATABASE_URL: databaseUrl }, stdio: 'ignore' });

  const start = (name, file, env) => {
    const child = spawn(process.execPath, [file], { env: { ...common, ...env }, stdio: ['ignore', 'inherit', 'inherit'] });
    child.name = name;
    children.push(child);
    return child;
  };
  const petsPort = basePort;
  start('pets', PETS_MAIN, { PETS_PORT: String(petsPort), DATABASE_URL: databaseUrl, PETS_METRICS_PORT: '0' });
  await waitForHttp(`http://127.0.0.1:${petsPort}/health/ready`);

  const gateways = [];
  for (let i = 1; i <= instances; i += 1) {
    const gatewayPort = basePort + i;
    const metricsPort = basePort + 100 + i;
    const child = start(`gateway-${i}`, GATEWAY_MAIN, {
      PORT: String(gatewayPort),
      HOST: '127.0.0.1',
      PETS_URL: `http://127.0.0.1:${petsPort}`,
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: `${options.keyPrefix ?? run}:`,
      GATEWAY_DATABASE_URL: databaseUrl,
      ADMIN_PORT: String(basePort + 50 + i),
      ADMIN_HOST: '127.0.0.1',
      ADMIN_TOKEN: adminToken,
      METRICS_PORT: String(metricsPort),
      TRUST_PROXY: 'loopback',
    });
    gateways.push({ port: gatewayPort, metricsPort, adminPort: basePort + 50 + i, process: child });
  }
  for (const gateway of gateways) await waitForHttp(`http://127.0.0.1:${gateway.port}/health/ready`);

  mkdirSync(path.join(dir, 'client-body'), { recursive: true });
  mkdirSync(path.join(dir, 'proxy'), { recursive: true });
  writeFileSync(path.join(dir, 'nginx.conf'), nginxConfig(dir, port, gateways.map((g) => g.port), options.upstreamIdleSeconds ?? 60));
  const nginx = spawn('nginx', ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: 'inherit' });
  nginx.name = 'nginx';
  children.push(nginx);
  await waitForHttp(`http://127.0.0.1:${port}/docs-json`);

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    const exits = children.filter((c) => c.exitCode === null && c.signalCode === null).map((c) => new Promise((resolve) => c.once('exit', resolve)));
    for (const child of children) child.kill('SIGTERM');
    await Promise.race([Promise.all(exits), new Promise((resolve) => setTimeout(resolve, 15_000))]);
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await ownDatabase?.drop();
  };
  const admin = { adminUrl: `http://127.0.0.1:${gateways[0].adminPort}`, adminToken };
  return { url: `http://127.0.0.1:${port}`, gateways, admin, dir, keysCli: KEYS, stop };
}

module.exports = { startStack };

if (require.main === module) {
  startStack().then(
    (stack) => {
      const adminEnv = `ADMIN_URL=${stack.admin.adminUrl} ADMIN_TOKEN=${stack.admin.adminToken}`;
      const key = execSync(`node ${KEYS} create --plan free`, { env: { ...process.env, ADMIN_URL: stack.admin.adminUrl, ADMIN_TOKEN: stack.admin.adminToken } })
        .toString().trim().split('\n').pop();
      console.log(`\nStack up: ${stack.gateways.length} gateways behind nginx on ${stack.url} (Swagger UI: ${stack.url}/docs)`);
      console.log(`Free-plan key for this stack: ${key}`);
      console.log(`Admin API (loopback only, not behind nginx): ${stack.admin.adminUrl}/docs`);
      console.log(`Mint more: ${adminEnv} npm run -s keys -- create --plan pro\nCtrl-C stops everything.`);
      const shutdown = () => stack.stop().then(() => process.exit(0));
      process.once('SIGINT', shutdown);
      process.once('SIGTERM', shutdown);
    },
    (error) => {
      console.error(error.message ?? error);
      process.exit(1);
    },
  );
}
