/**
 * This machine's PostgreSQL (5432) and Redis (6379), started if they are down (Debian's cluster tools; Redis
 * without persistence). For `npm run stack` and the benches.
 */
const { execSync, spawnSync } = require('node:child_process');

/** The local PostgreSQL server, by its maintenance database (any database of it will do to create others). */
const LOCAL_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

function ensureLocalServices() {
  if (spawnSync('pg_isready', ['-h', '127.0.0.1', '-p', '5432', '-q']).status !== 0) {
    execSync('pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start', {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }
  if (spawnSync('redis-cli', ['-h', '127.0.0.1', 'ping']).status !== 0) {
    execSync('redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no', {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }
}

module.exports = { LOCAL_POSTGRES_URL, ensureLocalServices };
