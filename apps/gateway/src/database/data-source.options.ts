import { DataSource, DataSourceOptions, EntitySchema } from 'typeorm';
import { DatabaseEndpoint, postgresDataSourceOptions } from '@app/database';
import { CreateConsumers1763942400000 } from './migrations/1763942400000-CreateConsumers';
import { AddKeySuccessor1764547200000 } from './migrations/1764547200000-AddKeySuccessor';
import { AddAdminTokensAndAudit1795514162797 } from './migrations/1795514162797-AddAdminTokensAndAudit';
import { AddPlanRequests1795531276417 } from './migrations/1795531276417-AddPlanRequests';
import { CreateUsageHistory1795600000000 } from './migrations/1795600000000-CreateUsageHistory';
import { AddConsumerEmail1795650000037 } from './migrations/1795650000037-AddConsumerEmail';
import { AddAuditAggregatesAndEndUsers1795710000000 } from './migrations/1795710000000-AddAuditAggregatesAndEndUsers';
import { AddBillingAnchor1795794638464 } from './migrations/1795794638464-AddBillingAnchor';
import { AddAdminTokenCreator1795800000000 } from './migrations/1795800000000-AddAdminTokenCreator';
import { AddPrepaidCredits1795900000000 } from './migrations/1795900000000-AddPrepaidCredits';
import { AddBillingPeriodRecut1795920798373 } from './migrations/1795920798373-AddBillingPeriodRecut';
import { AddCreditRebuildBarriers1796000000000 } from './migrations/1796000000000-AddCreditRebuildBarriers';
import { AddPlanRequestRequester1796100000000 } from './migrations/1796100000000-AddPlanRequestRequester';
import { AddThresholdEvents1796200000000 } from './migrations/1796200000000-AddThresholdEvents';
import { AddWebhooks1796300000000 } from './migrations/1796300000000-AddWebhooks';
import { AddUsageMinutelyAndExport1796400000000 } from './migrations/1796400000000-AddUsageMinutelyAndExport';
import { AddAlertThresholdsAndLeases1796500000000 } from './migrations/1796500000000-AddAlertThresholdsAndLeases';
import { AddClientBindings1796600000000 } from './migrations/1796600000000-AddClientBindings';
import { AddAllowedAddresses1796700000000 } from './migrations/1796700000000-AddAllowedAddresses';
import { AddPersonSessions1796800000000 } from './migrations/1796800000000-AddPersonSessions';
import { AddOutboxMessageSeq1797200000000 } from './migrations/1797200000000-AddOutboxMessageSeq';
import { AddWebhookSecretOverlap1797300000000 } from './migrations/1797300000000-AddWebhookSecretOverlap';
import { AddThresholdEventSeq1797400000000 } from './migrations/1797400000000-AddThresholdEventSeq';

/** The gateway's TypeORM data source has a name: in one process with the pets service (tests), they must not clash. */
export const GATEWAY_DATA_SOURCE = 'gateway';

export const MIGRATIONS = [
  CreateConsumers1763942400000,
  AddKeySuccessor1764547200000,
  AddAdminTokensAndAudit1795514162797,
  AddPlanRequests1795531276417,
  CreateUsageHistory1795600000000,
  AddConsumerEmail1795650000037,
  AddAuditAggregatesAndEndUsers1795710000000,
  AddBillingAnchor1795794638464,
  AddAdminTokenCreator1795800000000,
  AddPrepaidCredits1795900000000,
  AddBillingPeriodRecut1795920798373,
  AddCreditRebuildBarriers1796000000000,
  AddPlanRequestRequester1796100000000,
  AddThresholdEvents1796200000000,
  AddWebhooks1796300000000,
  AddUsageMinutelyAndExport1796400000000,
  AddAlertThresholdsAndLeases1796500000000,
  AddClientBindings1796600000000,
  AddAllowedAddresses1796700000000,
  AddPersonSessions1796800000000,
  AddOutboxMessageSeq1797200000000,
  AddWebhookSecretOverlap1797300000000,
  AddThresholdEventSeq1797400000000,
];

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- TypeORM's own type for an entity class
type EntityClass = Function | EntitySchema;

/**
 * The one description of the gateway's database, used by the app, the tests and the drift check. Everything
 * lives in its own schema (GATEWAY_DB_SCHEMA), so the gateway can share a database with the pets service. The
 * entities are the rooms' own (CONSUMER_ENTITIES, ACCESS_ENTITIES, …): this folder knows the plumbing and the migrations only.
 */
export function dataSourceOptions(
  endpoint: DatabaseEndpoint,
  poolSize: number,
  schema: string,
  entities: EntityClass[],
): DataSourceOptions {
  return postgresDataSourceOptions(endpoint, {
    application: 'gateway',
    poolSize,
    schema,
    entities,
    migrations: MIGRATIONS,
    // A burst of admin writes queues for a connection (they serialise on the database anyway): wait, don't fail.
    connectionTimeoutMs: 10_000,
    // A lookup never waits long on a sick database: the cache answers meanwhile (see KeyCache).
    queryTimeoutMs: 5_000,
  });
}

/** The schema a data source's tables live in (GATEWAY_DB_SCHEMA), for the few queries written in SQL. */
export function schemaOf(dataSource: DataSource): string {
  return (dataSource.options as { schema?: string }).schema ?? 'public';
}
