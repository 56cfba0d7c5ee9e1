#!/usr/bin/env node
// Writes gateway/openapi.json from the built gateway (npm run openapi:export builds it first), from the code and
// the default configuration only: the developer's environment never changes it. With --check, writes nothing and
// fails when the committed file is stale (CI).
const { readFileSync, writeFileSync } = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const BUILT = path.join(ROOT, 'dist/apps/gateway/apps/gateway/src');
const OPENAPI_FILE = 'gateway/openapi.json';

async function exportOpenApi(check) {
  const { loadGatewayConfig } = require(path.join(BUILT, 'config/gateway.config.js'));
  const { loadPlans } = require(path.join(BUILT, 'plans/plans.js'));
  const { createGatewayApp } = require(path.join(BUILT, 'create-gateway-app.js'));
  const { buildOpenApiDocument } = require(path.join(BUILT, 'docs/openapi.js'));
  const config = loadGatewayConfig({ NODE_ENV: 'test', LOG_LEVEL: 'error', GATEWAY_PGLITE_DATA_DIR: 'memory://' });
  const plans = loadPlans(config.plansFile);
  const app = await createGatewayApp({ config, plans });
  try {
    const text = `${JSON.stringify(buildOpenApiDocument(app, config, plans, false), null, 2)}\n`;
    if (!check) {
      writeFileSync(OPENAPI_FILE, text);
      console.log(`Wrote ${OPENAPI_FILE}`);
      return 0;
    }
    let current = '';
    try {
      current = readFileSync(OPENAPI_FILE, 'utf8');
    } catch {
      /* missing: stale */
    }
    if (current === text) {
      console.log(`${OPENAPI_FILE} is up to date.`);
      return 0;
    }
    const lines = current.split('\n');
    const first = text.split('\n').findIndex((line, i) => line !== lines[i]);
    console.error(`${OPENAPI_FILE} is stale (first difference at line ${first + 1}): run npm run openapi:export and commit it.`);
    return 1;
  } finally {
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
