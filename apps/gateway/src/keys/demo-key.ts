import { writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ApiError } from '@app/errors';
import { GatewayConfig } from '../config/gateway.config';
import { ROOT_CONTEXT } from '../access/admin-context';
import { ConsumersService } from '../consumers/consumers.service';

export const DEMO_CONSUMER = 'demo';

/** Kept beside the admin token (under .data/ by default). */
export function demoKeyFile(config: GatewayConfig): string {
  return join(dirname(config.admin.tokenFile), 'demo-api-key');
}

/**
 * Development only (never with NODE_ENV=production): when no consumer exists yet, create a Free-plan "demo"
 * consumer, print its key once on standard output (not through the logger) and keep a copy under .data/, so
 * that a newcomer can authorize in Swagger UI straight away. Two instances starting together create it once
 * (the name is unique); the second one prints nothing.
 */
export async function mintDemoKeyIfNoConsumers(
  config: GatewayConfig,
  store: ConsumersService,
): Promise<string | undefined> {
  if (!config.demoKey || (await store.hasConsumers())) return undefined;
  let key: string;
  try {
    // Root, said explicitly: start-up seeding, no admin request behind it (audited without request id or source).
    key = (await store.create(ROOT_CONTEXT, { name: DEMO_CONSUMER, plan: 'free' })).issued.key;
  } catch (error) {
    if (error instanceof ApiError && error.code === 'CONSUMER_EXISTS') return undefined;
    throw error;
  }
  const copy = demoKeyFile(config);
  await mkdir(dirname(copy), { recursive: true });
  writeFileSync(copy, `${key}\n`, { mode: 0o600 });
  process.stdout.write(
    `\n  Development API key (Free plan), shown once and kept in ${copy}:\n\n    ${key}\n\n` +
      '  Open /docs, press "Authorize" and paste it. Mint more with: npm run -s keys -- create --plan pro\n\n',
  );
  return key;
}
