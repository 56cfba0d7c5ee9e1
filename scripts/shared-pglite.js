/**
 * The embedded PostgreSQL that `npm start` shares between the pets service and the gateway: one PGlite, served
 * on a loopback port by the gateway's PgliteWireServer (which keeps several connections safe on PGlite's single
 * session and forwards NOTIFY). Needs the built gateway (`npm run build`).
 */
const { mkdirSync } = require('node:fs');
const path = require('node:path');

const WIRE_SERVER = path.join(__dirname, '..', 'dist/apps/gateway/apps/gateway/src/consumers/database/pglite-wire-server.js');

async function startSharedPglite(dataDir) {
  const { PGlite } = require('@electric-sql/pglite');
  const { PgliteWireServer } = require(WIRE_SERVER);
  mkdirSync(dataDir, { recursive: true });
  const db = await PGlite.create(dataDir);
  const server = new PgliteWireServer(db);
  const address = await server.listen(0, '127.0.0.1');
  console.log(`database | Embedded PGlite in ${dataDir}, shared by the apps on ${address}`);
  return {
    url: `postgres://postgres@${address}/postgres`,
    close: async () => {
      await server.close();
      await db.close();
    },
  };
}

module.exports = { startSharedPglite };
