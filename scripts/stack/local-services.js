/**
 * Starts this machine's PostgreSQL and Redis when the stack is to use them (their default addresses) and they
 * are down. Servers elsewhere are the user's to run: the stack only reports them when they do not answer.
 */
const { execSync, spawnSync } = require('node:child_process');
const { StackError } = require('./stack-error');

const LOCAL_POSTGRES = { host: '127.0.0.1', port: '5432' };
const LOCAL_REDIS_URL = 'redis://127.0.0.1:6379';
const START_TIMEOUT_MS = 30_000;

function isLocalPostgres(url) {
  const { hostname, port } = new URL(url);
  return ['127.0.0.1', 'localhost'].includes(hostname) && (port || '5432') === LOCAL_POSTGRES.port;
}

function startLocal(what, command) {
  try {
    execSync(command, { stdio: 'pipe', timeout: START_TIMEOUT_MS });
  } catch (error) {
    const lastLine = String(error.stderr ?? error.message)
      .trim()
      .split('\n')
      .pop();
    throw new StackError(`${what} is down and could not be started (${command}): ${lastLine}`);
  }
}

function ensureLocalServices(settings) {
  const postgresUrl = settings.databaseUrl ?? settings.postgresUrl;
  if (
    isLocalPostgres(postgresUrl) &&
    spawnSync('pg_isready', ['-h', LOCAL_POSTGRES.host, '-p', LOCAL_POSTGRES.port, '-q'], { timeout: 10_000 })
      .status !== 0
  ) {
    startLocal(
      'PostgreSQL on 127.0.0.1:5432',
      'pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start',
    );
  }
  if (
    settings.redisUrl === LOCAL_REDIS_URL &&
    spawnSync('redis-cli', ['-h', '127.0.0.1', 'ping'], { timeout: 5000 }).status !== 0
  ) {
    startLocal(
      'Redis on 127.0.0.1:6379',
      'redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no',
    );
  }
}

module.exports = { ensureLocalServices };
