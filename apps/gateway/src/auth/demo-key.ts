import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { GatewayConfig } from '../config/gateway.config';
import { generateApiKey, hashApiKey, keyHint } from './api-key';
import { readConsumersFile, writeConsumersFile } from './consumers-file';
import { PlanTable } from './plans';

export const DEMO_CONSUMER = 'demo';

/**
 * Development only (never with NODE_ENV=production): when no consumer exists yet, mint a Free-plan "demo" key,
 * print it once on standard output (not through the logger) and keep a copy beside the consumers file, so that
 * a newcomer can authorize in Swagger UI straight away.
 */
export function mintDemoKeyIfNoConsumers(config: GatewayConfig, plans: PlanTable): string | undefined {
  if (config.production) return undefined;
  const file = readConsumersFile(config.consumersFile, plans);
  if (file.consumers.length > 0) return undefined;
  const key = generateApiKey();
  file.consumers.push({
    name: DEMO_CONSUMER,
    plan: 'free',
    keyHash: hashApiKey(key),
    keyHint: keyHint(key),
    createdAt: new Date().toISOString(),
  });
  writeConsumersFile(config.consumersFile, file);
  const copy = join(dirname(config.consumersFile), 'demo-api-key');
  writeFileSync(copy, `${key}\n`, { mode: 0o600 });
  process.stdout.write(
    `\n  Development API key (Free plan), shown once and kept in ${copy}:\n\n    ${key}\n\n` +
      '  Open /docs, press "Authorize" and paste it. Mint more with: npm run -s keys -- create --plan pro\n\n',
  );
  return key;
}
