#!/usr/bin/env node
// Writes gateway/openapi.json (the public API) and gateway/admin-openapi.json (the admin API) from the built
// gateway (npm run openapi:export builds it first), from the code and the default configuration only: the
// developer's environment never changes them. With --check, writes nothing and fails when a committed file is
// stale (CI).
const { readFileSync, writeFileSync } = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const BUILT = path.join(ROOT, 'dist/apps/gateway/apps/gateway/src');
const OPENAPI_FILE = 'gateway/openapi.json';
const ADMIN_OPENAPI_FILE = 'gateway/admin-openapi.json';

/** Writes `text` to `file`, or (check) says whether the committed file is `text`; true when all is well. */
function writeOrCheck(file, text, check) {
  if (!check) {
    writeFileSync(file, text);
    console.log(`Wrote ${file}`);
    return true;
  }
  let current = '';
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    /* missing: stale */
  }
  if (current === text) {
    console.log(`${file} is up to date.`);
    return true;
  }
  const lines = current.split('\n');
  const first = text.split('\n').findIndex((line, i) => line !== lines[i]);
  console.error(`${file} is stale (first difference at line ${first + 1}): run npm run openapi:export and commit it.`);
  return false;
}

async function exportOpenApi(check) {
  const { loadGatewayConfig } = require(path.join(BUILT, 'config/gateway.config.js'));
  const { loadPlans } = require(path.join(BUILT, 'plans/plans.js'));
  const { assembleGateway } = require(path.join(BUILT, 'assemble-gateway.js'));
  const { buildOpenApiDocument } = require(path.join(BUILT, 'docs/openapi.js'));
  const { buildAdminOpenApiDocument } = require(path.join(BUILT, 'admin/admin-openapi.js'));
  // No development demo key: an export writes the two documents and nothing else (never .data/demo-api-key).
  const config = loadGatewayConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'error',
    GATEWAY_PGLITE_DATA_DIR: 'memory://',
    DEMO_KEY: 'false',
  });
  const plans = loadPlans(config.plansFile);
  // Built as main.ts builds it, never listening: the admin token is a throwaway.
  const { app, admin } = await assembleGateway({ config, plans, adminToken: 'x'.repeat(32) });
  try {
    const json = (document) => `${JSON.stringify(document, null, 2)}\n`;
    const results = [
      writeOrCheck(OPENAPI_FILE, json(buildOpenApiDocument(app, config, plans, false)), check),
      writeOrCheck(ADMIN_OPENAPI_FILE, json(buildAdminOpenApiDocument(admin, false)), check),
    ];
    return results.every(Boolean) ? 0 : 1;
  } finally {
    await admin.close();
    await app.close();
  }
}

exportOpenApi(process.argv.includes('--check')).then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
