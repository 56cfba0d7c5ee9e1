import { readFileSync, writeFileSync } from 'node:fs';
import { loadPlans } from '../consumers/plans';
import { loadGatewayConfig } from '../config/gateway.config';
import { createGatewayApp } from '../create-gateway-app';
import { buildOpenApiDocument } from './openapi';

export const OPENAPI_FILE = 'gateway/openapi.json';

/**
 * Writes the OpenAPI document to gateway/openapi.json, from the code and the default configuration only (the
 * developer's environment never changes it). With --check, writes nothing and fails when the file is stale.
 */
async function exportOpenApi(check: boolean): Promise<number> {
  const config = loadGatewayConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'error',
    GATEWAY_PGLITE_DATA_DIR: 'memory://',
  });
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
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
