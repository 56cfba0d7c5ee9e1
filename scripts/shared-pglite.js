/**
 * The embedded PostgreSQL that `npm start` shares between the pets service and the gateway: one PGlite, served
 * on a loopback port by libs/database's PgliteWireServer (which keeps several connections safe on PGlite's single
 * session and forwards NOTIFY). Needs the built library (`npm run build` builds libs/database to dist/libs/database).
 *
 * Memory: PostgreSQL's shared buffers live in PGlite's WebAssembly memory and are all touched at start-up, so
 * PostgreSQL's default of 128 MB is resident whether it is used or not. PGlite reads and writes the data folder
 * through the file system, whose page cache already holds what a small development database reads, so a
 * smaller buffer pool (PGLITE_SHARED_BUFFERS, 16 MB) costs little: this process idles at ~215 MB, not ~320 MB.
 */
const { execFile } = require('node:child_process');
const { existsSync, mkdirSync, renameSync, rmSync } = require('node:fs');
const path = require('node:path');
const v8 = require('node:v8');
const vm = require('node:vm');

const WIRE_SERVER = path.join(__dirname, '..', 'dist/libs/database/pglite-wire-server.js');
const DEFAULT_SHARED_BUFFERS = '16MB';

/** PostgreSQL's own syntax for a memory setting: a number with an optional kB, MB or GB (8 kB pages without). */
function sharedBuffers(value = DEFAULT_SHARED_BUFFERS) {
  if (!/^\d+(kB|MB|GB)?$/.test(value))
    throw new Error(`PGLITE_SHARED_BUFFERS must look like 16MB (a number and kB, MB or GB), not "${value}"`);
  return value;
}

/**
 * Creating a database runs initdb in WebAssembly instances of their own (several hundred MB), garbage once the
 * database exists, but V8 would keep them until a major collection this process has little reason to run. A
 * folder is therefore created by a short-lived process; an in-memory database (tests) can only be created here,
 * and is collected a second after creation: right after PGlite.create resolves PGlite still holds it (measured:
 * 640 MB left resident when collected at once, 310 MB a second later).
 */
async function createInChildProcess(dataDir, startParams) {
  // Created beside it, then renamed: a start interrupted while initdb runs leaves no half-made database behind.
  const target = path.resolve(dataDir);
  const staging = path.join(path.dirname(target), `.${path.basename(target)}.creating`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(path.dirname(target), { recursive: true });
  const script = `require('@electric-sql/pglite').PGlite.create(process.argv[1], { startParams: JSON.parse(process.argv[2]) }).then((db) => db.close())`;
  await new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['-e', script, staging, JSON.stringify(startParams)],
      { cwd: path.join(__dirname, '..') },
      (error, _stdout, stderr) =>
        error ? reject(new Error(`creating ${dataDir} failed: ${stderr.trim() || error.message}`)) : resolve(),
    );
  });
  try {
    renameSync(staging, target); // replaces an empty folder; a folder with other files in it is refused
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw new Error(
      `${dataDir} holds files but no database (no PG_VERSION): empty it or choose another PGLITE_DATA_DIR (${error.code})`,
      { cause: error },
    );
  }
}

function collectGarbage() {
  v8.setFlagsFromString('--expose-gc');
  vm.runInNewContext('gc')();
}

async function startSharedPglite(
  dataDir,
  { sharedBuffers: buffers = process.env.PGLITE_SHARED_BUFFERS || undefined } = {},
) {
  const { PGlite } = require('@electric-sql/pglite');
  const { PgliteWireServer } = require(WIRE_SERVER);
  const startParams = [...PGlite.defaultStartParams, '-c', `shared_buffers=${sharedBuffers(buffers)}`];
  const inMemory = dataDir.startsWith('memory://');
  if (!inMemory && !existsSync(path.join(dataDir, 'PG_VERSION'))) await createInChildProcess(dataDir, startParams);
  const db = await PGlite.create(dataDir, { startParams });
  if (inMemory) setTimeout(collectGarbage, 1000).unref();
  const server = new PgliteWireServer(db);
  const address = await server.listen(0, '127.0.0.1');
  return {
    url: `postgres://postgres@${address}/postgres`,
    close: async () => {
      await server.close();
      await db.close();
    },
  };
}

module.exports = { startSharedPglite };
