import { DataSource } from 'typeorm';
import { loadGatewayConfig } from '../../../apps/gateway/src/config/gateway.config';
import { ACCESS_ENTITIES } from '../../../apps/gateway/src/access/access-entities';
import { CONSUMER_ENTITIES } from '../../../apps/gateway/src/consumers/consumer-entities';
import { PLAN_REQUEST_ENTITIES } from '../../../apps/gateway/src/plan-requests/plan-request-entities';
import { USAGE_ENTITIES } from '../../../apps/gateway/src/usage/usage-entities';
import { CREDIT_ENTITIES } from '../../../apps/gateway/src/credits/credit-entities';
import { ALERT_ENTITIES } from '../../../apps/gateway/src/alerts/alert-entities';
import { USAGE_EXPORT_ENTITIES } from '../../../apps/gateway/src/usage-export/usage-export-entities';
import { WEBHOOK_ENTITIES } from '../../../apps/gateway/src/webhooks/webhook-tables';
import { CLIENT_BINDING_ENTITIES } from '../../../apps/gateway/src/client-bindings/client-binding-entities';
import { dataSourceOptions } from '../../../apps/gateway/src/database/data-source.options';
import { DatabaseEndpoint } from '@app/database';
import { runMigrations } from '../../../apps/gateway/src/database/run-migrations';
import { openDatabaseEndpoint } from '../../../apps/gateway/src/database/gateway-database.module';
import { createGatewayTestDatabase, GatewayTestDatabase } from '../../support/gateway';
import { runIf } from '../../support/skip';

const ENTITIES = [
  ...CONSUMER_ENTITIES,
  ...ACCESS_ENTITIES,
  ...PLAN_REQUEST_ENTITIES,
  ...USAGE_ENTITIES,
  ...CREDIT_ENTITIES,
  ...ALERT_ENTITIES,
  ...USAGE_EXPORT_ENTITIES,
  ...WEBHOOK_ENTITIES,
  ...CLIENT_BINDING_ENTITIES,
];

/** Every migration, in order, written out: a migration left out of MIGRATIONS fails here. */
const ALL_MIGRATIONS = [
  'CreateConsumers1763942400000',
  'AddKeySuccessor1764547200000',
  'AddAdminTokensAndAudit1795514162797',
  'AddPlanRequests1795531276417',
  'CreateUsageHistory1795600000000',
  'AddConsumerEmail1795650000037',
  'AddAuditAggregatesAndEndUsers1795710000000',
  'AddBillingAnchor1795794638464',
  'AddAdminTokenCreator1795800000000',
  'AddPrepaidCredits1795900000000',
  'AddBillingPeriodRecut1795920798373',
  'AddCreditRebuildBarriers1796000000000',
  'AddPlanRequestRequester1796100000000',
  'AddThresholdEvents1796200000000',
  'AddWebhooks1796300000000',
  'AddUsageMinutelyAndExport1796400000000',
  'AddAlertThresholdsAndLeases1796500000000',
  'AddClientBindings1796600000000',
  'AddAllowedAddresses1796700000000',
  'AddPersonSessions1796800000000',
  'AddOutboxMessageSeq1797200000000',
  'AddWebhookSecretOverlap1797300000000',
  'AddThresholdEventSeq1797400000000',
];

/** The gateway's migrations are its schema: exactly what the entities describe, in their own schema, once. */
describe('gateway migrations', () => {
  let database: GatewayTestDatabase;
  let endpoint: DatabaseEndpoint;
  let source: DataSource;

  beforeAll(async () => {
    database = await createGatewayTestDatabase('empty');
    endpoint = await openDatabaseEndpoint(loadGatewayConfig({ GATEWAY_DATABASE_URL: database.url }));
    source = await new DataSource({
      ...dataSourceOptions(endpoint, 2, 'gateway', ENTITIES),
      logging: false,
    }).initialize();
  });
  afterAll(async () => {
    if (source?.isInitialized) await source.destroy();
    await endpoint?.close();
    await database?.drop();
  });

  it('apply cleanly in the gateway schema and leave nothing for the entities to change (no drift)', async () => {
    expect(await runMigrations(source, endpoint, 'gateway')).toEqual(ALL_MIGRATIONS);
    const pending = await source.driver.createSchemaBuilder().log();
    expect(pending.upQueries.map((query) => query.query)).toEqual([]);
    const tables: Array<{ table_name: string }> = await source.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'gateway' ORDER BY table_name`,
    );
    expect(tables.map((t) => t.table_name)).toEqual([
      'admin_tokens',
      'api_keys',
      'audit_log',
      'client_bindings',
      'consumers',
      'credit_ledger',
      'credit_rebuild',
      'credit_spend_daily',
      'credit_spend_holder',
      'leases',
      'migrations',
      'outbox_messages',
      'plan_requests',
      'threshold_events',
      'usage_daily',
      'usage_export_batches',
      'usage_export_cursor',
      'usage_hourly',
      'usage_minutely',
      'used_id_tokens',
      'webhook_attempts',
      'webhook_deliveries',
      'webhook_endpoints',
    ]);
  });

  it('are not applied twice', async () => {
    expect(await runMigrations(source, endpoint, 'gateway')).toEqual([]);
  });

  it('index the key hash uniquely: the data plane looks keys up by it', async () => {
    const rows: Array<{ indexdef: string }> = await source.query(
      `SELECT indexdef FROM pg_indexes WHERE schemaname = 'gateway' AND tablename = 'api_keys' AND indexname = 'UQ_api_keys_key_hash'`,
    );
    expect(rows[0]?.indexdef).toMatch(/UNIQUE INDEX .* \(key_hash\)/);
  });

  // Needs a server: on the embedded engine every connection is PGlite's one session, where an advisory lock is
  // re-entrant (and the embedded data belongs to one gateway process anyway).
  const ifDatabase = runIf(process.env.DATABASE_URL, 'DATABASE_URL (a PostgreSQL server)');
  ifDatabase.it('run once when two instances start at the same time', async () => {
    const fresh = await createGatewayTestDatabase('empty');
    const shared = await openDatabaseEndpoint(loadGatewayConfig({ GATEWAY_DATABASE_URL: fresh.url }));
    const a = new DataSource({ ...dataSourceOptions(shared, 2, 'gateway', ENTITIES), logging: false });
    const b = new DataSource({ ...dataSourceOptions(shared, 2, 'gateway', ENTITIES), logging: false });
    try {
      await Promise.all([a.initialize(), b.initialize()]);
      const results = await Promise.all([runMigrations(a, shared, 'gateway'), runMigrations(b, shared, 'gateway')]);
      expect(results.flat()).toEqual(ALL_MIGRATIONS);
    } finally {
      await a.destroy();
      await b.destroy();
      await fresh.drop();
    }
  });
});
