/**
 * A throwaway database on a PostgreSQL server: created under a unique name, dropped WITH (FORCE) when done.
 * One copy for the test helpers (TypeScript, through throwaway-database.d.ts), bench/support.js and
 * scripts/stack.js.
 *
 * CREATE and DROP DATABASE run on the server's maintenance database, `postgres`, so that the database the URL
 * names need not exist; only where `postgres` is missing or refuses us do they run on the one the URL names.
 */
const { randomBytes } = require('node:crypto');
const { Client } = require('pg');

const MAINTENANCE_DATABASE = 'postgres';
/** Connection errors that mean "not this database": it does not exist, or we may not connect to it. */
const UNUSABLE_DATABASE = new Set(['3D000', '42501', '28000']);
/** PostgreSQL's longest identifier (NAMEDATALEN - 1). */
const MAX_NAME_LENGTH = 63;

/** `serverUrl` with its database replaced by `database` (user, host, port and parameters kept). */
function databaseUrl(serverUrl, database) {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Runs one statement on the maintenance database of `serverUrl`'s server (see above for the fallback). */
async function maintenanceQuery(serverUrl, statement) {
  const maintenance = databaseUrl(serverUrl, MAINTENANCE_DATABASE);
  const candidates = maintenance === new URL(serverUrl).toString() ? [serverUrl] : [maintenance, serverUrl];
  for (const [i, connectionString] of candidates.entries()) {
    const client = new Client({ connectionString });
    try {
      await client.connect();
    } catch (error) {
      if (i < candidates.length - 1 && UNUSABLE_DATABASE.has(error.code)) continue;
      throw error;
    }
    try {
      await client.query(statement);
      return;
    } finally {
      await client.end();
    }
  }
}

/**
 * Creates `<prefix>_<pid>_<8 hex digits>` on `serverUrl`'s server, a copy of `options.template` when given (a
 * database nobody is connected to, such as the test helpers' migrated templates). `url` is `serverUrl` naming it;
 * `drop()` removes it, forcing out any connection left (safe to call twice).
 */
async function createThrowawayDatabase(serverUrl, prefix, options = {}) {
  const name = `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
  if (!/^[a-z][a-z0-9_]*$/.test(prefix) || name.length > MAX_NAME_LENGTH) {
    throw new Error(
      `throwaway database prefix "${prefix}": lower-case letters, digits and _, and short enough for ${MAX_NAME_LENGTH} characters in all`,
    );
  }
  const { template } = options;
  if (template !== undefined && !/^[a-z][a-z0-9_]*$/.test(template))
    throw new Error(`throwaway database template "${template}": lower-case letters, digits and _`);
  await maintenanceQuery(serverUrl, `CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`);
  return {
    name,
    url: databaseUrl(serverUrl, name),
    drop: () => maintenanceQuery(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}

module.exports = { createThrowawayDatabase, maintenanceQuery };
