import { DataSource } from 'typeorm';
import { DatabaseEndpoint } from '@app/database';
import { ACCESS_ENTITIES } from '../../../apps/gateway/src/access/access-entities';
import { CREDIT_ENTITIES } from '../../../apps/gateway/src/credits/credit-entities';
import { CreditLedgerRepository } from '../../../apps/gateway/src/credits/credit-ledger.repository';
import { loadGatewayConfig } from '../../../apps/gateway/src/config/gateway.config';
import { CONSUMER_ENTITIES } from '../../../apps/gateway/src/consumers/consumer-entities';
import { dataSourceOptions } from '../../../apps/gateway/src/database/data-source.options';
import { openDatabaseEndpoint } from '../../../apps/gateway/src/database/gateway-database.module';
import { runMigrations } from '../../../apps/gateway/src/database/run-migrations';
import { createGatewayTestDatabase, GatewayTestDatabase } from '../../support/gateway';

/**
 * The rebuild barrier in the database (docs/billing.md "A lost counter store"): a flush writes the spend and
 * acknowledges the barrier together; an instance silent past the bound is fenced, and the spend it held then is
 * never recorded (the rebuild counted without it, so recording it would spend more than was credited).
 */
describe('the credit rebuild barrier', () => {
  let database: GatewayTestDatabase;
  let endpoint: DatabaseEndpoint;
  let source: DataSource;
  let ledger: CreditLedgerRepository;
  const today = new Date().toISOString().slice(0, 10);
  const spend = (consumer: string, spent: number) => [{ consumer, day: today, spent }];

  beforeAll(async () => {
    database = await createGatewayTestDatabase();
    endpoint = await openDatabaseEndpoint(loadGatewayConfig({ GATEWAY_DATABASE_URL: database.url }));
    source = await new DataSource({
      ...dataSourceOptions(endpoint, 2, 'gateway', [...CONSUMER_ENTITIES, ...ACCESS_ENTITIES, ...CREDIT_ENTITIES]),
      logging: false,
    }).initialize();
    await runMigrations(source, endpoint, 'gateway');
    ledger = new CreditLedgerRepository(source);
  });
  afterAll(async () => {
    if (source?.isInitialized) await source.destroy();
    await endpoint?.close();
    await database?.drop();
  });

  it('a flush acknowledges the barrier it read, with the spend it wrote; the laggards are the live instances behind it', async () => {
    await ledger.flushSpend('a', spend('acme', 3), 0);
    await ledger.flushSpend('b', [], 0);
    const barrier = await ledger.openRebuild('acme', 'a');
    expect(await ledger.latestBarrier()).toBe(barrier);
    expect((await ledger.laggards(barrier, 60_000)).sort()).toEqual(['a', 'b']);
    await ledger.flushSpend('b', spend('acme', 4), barrier);
    expect(await ledger.laggards(barrier, 60_000)).toEqual(['a']);
    // Not seen within the bound: not waited for.
    expect(await ledger.laggards(barrier, 0)).toEqual([]);
    expect((await ledger.totals('acme')).balance).toBe(-7);
    await ledger.forgetHolder('a');
    await ledger.forgetHolder('b');
  });

  it('a fenced instance’s held spend is not recorded; what it spends after is', async () => {
    await ledger.flushSpend('silent', [], 0);
    const barrier = await ledger.openRebuild('globex', 'other');
    expect(await ledger.fence(barrier, ['silent'])).toBe(1);
    // It speaks again with what it held from before the loss: dropped, and the barrier acknowledged.
    expect(await ledger.flushSpend('silent', spend('globex', 5), 0)).toEqual({ dropped: true });
    expect((await ledger.totals('globex')).balance).toBe(0);
    expect(await ledger.laggards(barrier, 60_000)).not.toContain('silent');
    // From then on its spend counts again.
    expect(await ledger.flushSpend('silent', spend('globex', 2), barrier)).toEqual({ dropped: false });
    expect((await ledger.totals('globex')).balance).toBe(-2);
    await ledger.forgetHolder('silent');
  });

  it('an instance that acknowledged before the fence is not fenced', async () => {
    await ledger.flushSpend('quick', [], 0);
    const barrier = await ledger.openRebuild('initech', 'other');
    await ledger.flushSpend('quick', spend('initech', 1), barrier);
    expect(await ledger.fence(barrier, ['quick'])).toBe(0);
    expect(await ledger.flushSpend('quick', spend('initech', 1), barrier)).toEqual({ dropped: false });
    expect((await ledger.totals('initech')).balance).toBe(-2);
    await ledger.closeRebuild(barrier, 0, 0);
    await ledger.forgetHolder('quick');
  });
});
