import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError } from '@app/errors';
import { loadGatewayConfig } from '../config/gateway.config';
import { AdminRequestContext } from '../access/admin-context';
import { ConsumersService } from '../consumers/consumers.service';
import { mintDemoKeyIfNoConsumers } from './demo-key';

/** A store that holds what `create` was given (the real one is covered by the e2e tests on both engines). */
function storeWith(existing: string[]): ConsumersService & { created: string[] } {
  const names = [...existing];
  const created: string[] = [];
  return {
    created,
    hasConsumers: async () => names.length > 0,
    create: async (_context: AdminRequestContext, { name }: { name: string }) => {
      if (names.includes(name)) throw new ApiError('VALIDATION_FAILED', 'taken');
      names.push(name);
      created.push(name);
      return { issued: { key: `petk_${'k'.repeat(43)}` } };
    },
  } as unknown as ConsumersService & { created: string[] };
}

describe('mintDemoKeyIfNoConsumers', () => {
  const quiet = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
  afterAll(() => quiet.mockRestore());
  const configIn = (dir: string, env: Record<string, string> = {}) =>
    loadGatewayConfig({ ADMIN_TOKEN_FILE: join(dir, 'admin-token'), ...env });

  it('creates a Free "demo" consumer once in development and keeps a copy of its key for the newcomer', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'demo-key-'));
    const store = storeWith([]);
    const key = await mintDemoKeyIfNoConsumers(configIn(dir), store);
    expect(store.created).toEqual(['demo']);
    expect(readFileSync(join(dir, 'demo-api-key'), 'utf8').trim()).toBe(key);
    expect(await mintDemoKeyIfNoConsumers(configIn(dir), store)).toBeUndefined();
    expect(store.created).toEqual(['demo']);
  });

  it('never mints in production', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'demo-key-'));
    const store = storeWith([]);
    expect(
      await mintDemoKeyIfNoConsumers(
        configIn(dir, { NODE_ENV: 'production', ADMIN_TOKEN: randomBytes(32).toString('hex') }),
        store,
      ),
    ).toBeUndefined();
    expect(existsSync(join(dir, 'demo-api-key'))).toBe(false);
    expect(store.created).toEqual([]);
  });
});
