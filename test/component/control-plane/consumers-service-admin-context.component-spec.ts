import { join } from 'node:path';
import { DatabaseEndpoint } from '@app/database';
import { ApiError } from '@app/errors';
import { Logger } from '@nestjs/common';
import { createGatewayTestDatabase, GatewayTestDatabase } from '../../support/gateway';
import { DataSource } from 'typeorm';
import { loadGatewayConfig } from '../../../apps/gateway/src/config/gateway.config';
import { dataSourceOptions } from '../../../apps/gateway/src/database/data-source.options';
import { openDatabaseEndpoint } from '../../../apps/gateway/src/database/gateway-database.module';
import { runMigrations } from '../../../apps/gateway/src/database/run-migrations';
import { PlanLimits } from '../../../apps/gateway/src/plans/plan-limits';
import { loadPlans } from '../../../apps/gateway/src/plans/plans';
import { AdminActor, AdminRequestContext, ROOT_CONTEXT } from '../../../apps/gateway/src/access/admin-context';
import { AuditEntryEntity } from '../../../apps/gateway/src/access/audit-entry.entity';
import { AuditLog } from '../../../apps/gateway/src/access/audit-log';
import { ConsumerChanges } from '../../../apps/gateway/src/consumers/consumer-changes';
import { ACCESS_ENTITIES } from '../../../apps/gateway/src/access/access-entities';
import { CONSUMER_ENTITIES } from '../../../apps/gateway/src/consumers/consumer-entities';
import { SystemClock } from '../../../apps/gateway/src/clock';
import { ConsumerKeysService } from '../../../apps/gateway/src/consumers/consumer-keys.service';
import { ConsumerLocks } from '../../../apps/gateway/src/consumers/consumer-locks';
import { ConsumerRepository } from '../../../apps/gateway/src/consumers/consumer.repository';
import { ConsumersService } from '../../../apps/gateway/src/consumers/consumers.service';

const portal: AdminActor = {
  id: '00000000-0000-4000-8000-00000000000a',
  name: 'portal',
  scopes: ['consumers:write'],
  ownConsumersOnly: true,
  plans: ['free'],
};
const other: AdminActor = {
  id: '00000000-0000-4000-8000-00000000000b',
  name: 'other-portal',
  scopes: ['consumers:write', 'keys:write'],
  ownConsumersOnly: true,
  plans: null,
};

/** The context the admin app builds for a call: the token's actor, the request's id and source address. */
const call = (actor: AdminActor, requestId: string): AdminRequestContext => ({ actor, requestId, source: '10.0.0.7' });

/** The repository on a real (embedded) database: the actor it is handed decides, and the audit row carries the call. */
describe('ConsumersService and ConsumerKeysService with an explicit admin request context', () => {
  let database: GatewayTestDatabase;
  let endpoint: DatabaseEndpoint;
  let dataSource: DataSource;
  let store: ConsumersService;
  let keys: ConsumerKeysService;

  beforeAll(async () => {
    Logger.overrideLogger(false); // the embedded database's start-up line
    // A copy of the migrated gateway fixture (the worker's pool, or a template copy on DATABASE_URL's server).
    database = await createGatewayTestDatabase();
    const config = loadGatewayConfig({ GATEWAY_DATABASE_URL: database.url });
    endpoint = await openDatabaseEndpoint(config);
    dataSource = await new DataSource({
      ...dataSourceOptions(endpoint, 2, config.consumers.schema, [...CONSUMER_ENTITIES, ...ACCESS_ENTITIES]),
      logging: false,
    }).initialize();
    await runMigrations(dataSource, endpoint, config.consumers.schema);
    const changes = { publish: async () => undefined } as unknown as ConsumerChanges;
    const planLimits = new PlanLimits(loadPlans(join(__dirname, '../../../gateway/plans.json')));
    const clock = new SystemClock();
    const audit = new AuditLog(dataSource, config, clock);
    const repository = new ConsumerRepository(dataSource);
    const locks = new ConsumerLocks(repository);
    keys = new ConsumerKeysService(repository, locks, changes, audit, clock, config);
    store = new ConsumersService(repository, locks, keys, changes, planLimits, audit);
  });
  afterAll(async () => {
    if (dataSource?.isInitialized) await dataSource.destroy();
    await endpoint?.close();
    await database?.drop();
  });

  const rowsFor = (consumer: string) =>
    dataSource.getRepository(AuditEntryEntity).find({ where: { targetConsumer: consumer }, order: { id: 'ASC' } });

  it("writes the call's actor, request id and source into the audit row", async () => {
    const { consumer } = await store.create(call(portal, 'req-create'), { name: 'portal-app', plan: 'free' });
    expect(consumer.createdByToken).toBe(portal.id);
    expect(await rowsFor('portal-app')).toEqual([
      expect.objectContaining({
        action: 'consumer.create',
        actorId: portal.id,
        actorName: 'portal',
        requestId: 'req-create',
        source: '10.0.0.7',
      }),
    ]);
  });

  it("refuses (403) a restricted token's context on a consumer another token created, and changes nothing", async () => {
    const intruder = call(other, 'req-intrude');
    const attempts = [
      () => store.get(other, 'portal-app'),
      () => store.setDisabled(intruder, 'portal-app', true),
      () => keys.issueKey(intruder, 'portal-app'),
      () => keys.revoke(intruder, 'portal-app'),
    ];
    for (const attempt of attempts) {
      const refusal = await attempt().catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(ApiError);
      expect(refusal).toMatchObject({
        code: 'FORBIDDEN',
        message: 'Token "other-portal" may act only on the consumers it created; "portal-app" is not one of them.',
      });
    }
    expect((await store.list(other, 10)).items).toEqual([]);
    const stored = await store.get(portal, 'portal-app');
    expect(stored.consumer.disabledAt).toBeNull();
    expect(stored.keys.map((k) => k.revokedAt)).toEqual([null]);
    expect((await rowsFor('portal-app')).map((row) => row.action)).toEqual(['consumer.create']);
  });

  it("refuses a plan outside the token's plans before anything is written", async () => {
    await expect(store.create(call(portal, 'req-pro'), { name: 'portal-pro', plan: 'pro' })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    expect(await store.list(portal, 10)).toMatchObject({ items: [{ consumer: { name: 'portal-app' } }] });
  });

  it('ROOT_CONTEXT (start-up seeding) acts as root, audited without request id or source', async () => {
    await store.setDisabled(ROOT_CONTEXT, 'portal-app', true);
    expect((await rowsFor('portal-app')).at(-1)).toEqual(
      expect.objectContaining({
        action: 'consumer.disable',
        actorId: null,
        actorName: 'root',
        requestId: null,
        source: null,
      }),
    );
  });
});
