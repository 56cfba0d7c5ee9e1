/**
 * The stack's PostgreSQL database: DATABASE_URL as it is, or a fresh database for this run on the server of
 * STACK_POSTGRES_URL, created and dropped through that URL's own database (`postgres`, the maintenance database
 * every server has, by default; never one named `test`, which a server need not have).
 */
const { execFile } = require('node:child_process');
const { Client } = require('pg');
const { StackError } = require('./stack-error');

/** Connecting, creating and dropping: a server that does not answer fails the start instead of holding it. */
const STATEMENT_TIMEOUT_MS = 15_000;

function parsePostgresUrl(url, variable) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    throw new StackError(`${variable} is not a URL: ${url}`);
  }
  if (!/^postgres(ql)?:$/.test(parsed.protocol))
    throw new StackError(`${variable} must be a postgres:// URL, got ${parsed.protocol}//`);
  return parsed;
}

/** The URL without its password, to print. */
function shown(url) {
  const copy = new URL(url);
  if (copy.password) copy.password = '***';
  return copy.toString();
}

async function onServer(serverUrl, sql) {
  const client = new Client({
    connectionString: serverUrl,
    connectionTimeoutMillis: STATEMENT_TIMEOUT_MS,
    query_timeout: STATEMENT_TIMEOUT_MS,
  });
  try {
    await client.connect();
    await client.query(sql);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Resolves with { url, description, drop() }: the database the apps use, what it is in words, and its clean-up. */
async function prepareDatabase(settings) {
  if (settings.databaseUrl) {
    parsePostgresUrl(settings.databaseUrl, 'DATABASE_URL');
    return {
      url: settings.databaseUrl,
      description: `DATABASE_URL (${shown(settings.databaseUrl)}), kept after the stack stops`,
      drop: async () => undefined,
    };
  }
  const server = parsePostgresUrl(settings.postgresUrl, 'STACK_POSTGRES_URL');
  const name = settings.run;
  try {
    await onServer(settings.postgresUrl, `CREATE DATABASE "${name}"`);
  } catch (error) {
    throw new StackError(
      `could not create the database ${name} through STACK_POSTGRES_URL (${shown(settings.postgresUrl)}): ${error.message}`,
    );
  }
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    description: `${name}, created through ${shown(settings.postgresUrl)} (STACK_POSTGRES_URL), dropped when the stack stops`,
    drop: () =>
      onServer(settings.postgresUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch((error) => {
        console.error(`stack: could not drop the database ${name}: ${error.message}`);
      }),
  };
}

/** Runs the pets service's migrations (the gateways migrate their own schema as they start), within `timeoutMs`. */
function migrate(migrateScript, env, timeoutMs) {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [migrateScript],
      { env, timeout: timeoutMs, killSignal: 'SIGKILL' },
      (error, _stdout, stderr) => {
        if (!error) return resolve();
        const lastLine = stderr.trim().split('\n').pop();
        const why = error.killed
          ? `did not finish within ${timeoutMs / 1000} s (STACK_READY_TIMEOUT_MS)`
          : `failed${lastLine ? `: ${lastLine}` : ''}`;
        reject(new StackError(`the database migrations ${why}`));
      },
    );
  });
}

module.exports = { prepareDatabase, migrate, shown };
