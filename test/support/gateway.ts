import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import type { DestinationStream } from 'pino';
import { generateApiKey, hashApiKey, keyHint } from '../../apps/gateway/src/auth/api-key';
import { readConsumersFile, writeConsumersFile } from '../../apps/gateway/src/auth/consumers-file';
import { Limits, loadPlans, PlanName, PlanTable } from '../../apps/gateway/src/auth/plans';
import { Clock } from '../../apps/gateway/src/clock';
import { GatewayConfig, loadGatewayConfig } from '../../apps/gateway/src/config/gateway.config';
import { createGatewayApp } from '../../apps/gateway/src/create-gateway-app';

export const plans: PlanTable = loadPlans(join(__dirname, '../../gateway/plans.json'));

/** Real time, shifted by hand: a test can jump to a date (a sunset) while windows still pass in real time. */
export class FakeClock extends Clock {
  private offsetMs = 0;
  now(): number {
    return Date.now() + this.offsetMs;
  }
  /** From now on, the clock reads `time` and runs on from there. */
  set(time: number): void {
    this.offsetMs = time - Date.now();
  }
  reset(): void {
    this.offsetMs = 0;
  }
}

/** A fresh consumers file in a temporary folder. */
export function tempConsumersFile(): string {
  return join(mkdtempSync(join(tmpdir(), 'petstore-consumers-')), 'consumers.json');
}

/** Mints a key the way `npm run keys -- create` does, and returns it. */
export function mintKey(file: string, plan: PlanName, name = `c-${randomBytes(4).toString('hex')}`, limits?: Limits): string {
  const key = generateApiKey();
  const current = readConsumersFile(file, plans);
  current.consumers.push({ name, plan, keyHash: hashApiKey(key), keyHint: keyHint(key), createdAt: new Date().toISOString(), ...(limits ? { limits } : {}) });
  writeConsumersFile(file, current);
  return key;
}

export interface GatewayUnderTest {
  app: INestApplication;
  url: string;
  config: GatewayConfig;
  close(): Promise<void>;
}

/**
 * Starts the real gateway on a free port. With REDIS_URL set, its counters live in that Redis under a prefix of
 * its own (or `shared.keyPrefix`, to make several instances share them).
 */
export async function startGateway(options: {
  petsUrl: string;
  consumersFile?: string;
  clock?: Clock;
  env?: Record<string, string>;
  adjust?: (config: GatewayConfig) => void;
  keyPrefix?: string;
  logDestination?: DestinationStream;
}): Promise<GatewayUnderTest> {
  const config = loadGatewayConfig({
    PETS_URL: options.petsUrl,
    CONSUMERS_FILE: options.consumersFile ?? tempConsumersFile(),
    CONSUMERS_RELOAD_MS: '100',
    LOG_LEVEL: 'error',
    NODE_ENV: 'test',
    METRICS_PORT: '0',
    REDIS_URL: process.env.REDIS_URL,
    REDIS_KEY_PREFIX: options.keyPrefix ?? `${process.env.REDIS_KEY_PREFIX ?? 'test:'}${randomBytes(6).toString('hex')}:`,
    ...options.env,
  });
  options.adjust?.(config);
  const app = await createGatewayApp({ config, plans, clock: options.clock, logDestination: options.logDestination });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  return { app, config, url: `http://127.0.0.1:${port}`, close: () => app.close() };
}
