import { EntitySchema, EntitySchemaColumnOptions } from 'typeorm';
import { COUNTER_COLUMNS, LATENCY_COLUMNS, MINUTE_VALUE_COLUMNS } from './usage-counts';

/** A usage row as the tables hold it (the counters are bigint: the driver gives strings). */
interface UsageRow {
  consumer: string;
  [column: string]: unknown;
}

const BIGINT_ZERO: EntitySchemaColumnOptions = { type: 'bigint', default: 0 };

/** The additive columns both tables share, generated from usage-counts.ts (one list of columns). */
function additiveColumns(): Record<string, EntitySchemaColumnOptions> {
  return {
    ...Object.fromEntries(COUNTER_COLUMNS.map((name) => [name, BIGINT_ZERO])),
    latency_sum_ms: { type: 'double precision', default: 0 },
    ...Object.fromEntries(LATENCY_COLUMNS.map((name) => [name, BIGINT_ZERO])),
  };
}

/**
 * usage_hourly: one row per UTC hour, consumer and key (the anonymous and overflow rows have key_id ''), written
 * by every instance's flush with an additive upsert. The history of a consumer is read by (consumer, hour).
 */
const UsageHourlyEntity = new EntitySchema<UsageRow>({
  name: 'UsageHourly',
  tableName: 'usage_hourly',
  columns: {
    hour: { type: 'timestamptz', primary: true, primaryKeyConstraintName: 'PK_usage_hourly' },
    consumer: { type: 'varchar', length: 64, primary: true, primaryKeyConstraintName: 'PK_usage_hourly' },
    key_id: { type: 'varchar', length: 36, primary: true, primaryKeyConstraintName: 'PK_usage_hourly' },
    ...additiveColumns(),
  },
  indices: [{ name: 'IDX_usage_hourly_consumer_hour', columns: ['consumer', 'hour'] }],
});

/** usage_daily: the same counts per UTC day and consumer (all keys), upserted in the same transaction. */
const UsageDailyEntity = new EntitySchema<UsageRow>({
  name: 'UsageDaily',
  tableName: 'usage_daily',
  columns: {
    day: { type: 'date', primary: true, primaryKeyConstraintName: 'PK_usage_daily' },
    consumer: { type: 'varchar', length: 64, primary: true, primaryKeyConstraintName: 'PK_usage_daily' },
    ...additiveColumns(),
  },
  indices: [{ name: 'IDX_usage_daily_consumer_day', columns: ['consumer', 'day'] }],
});

/**
 * usage_minutely: one row per UTC minute, consumer and operation (every key of the consumer summed), the answers
 * per outcome and the credits they spent, upserted in the same transaction as the hour and day rows. Only
 * consumers' answers (nobody is billed for the anonymous and overflow rows). The usage export's source
 * (docs/usage-export.md); kept USAGE_MINUTE_RETENTION_DAYS.
 */
const UsageMinutelyEntity = new EntitySchema<UsageRow>({
  name: 'UsageMinutely',
  tableName: 'usage_minutely',
  columns: {
    minute: { type: 'timestamptz', primary: true, primaryKeyConstraintName: 'PK_usage_minutely' },
    consumer: { type: 'varchar', length: 64, primary: true, primaryKeyConstraintName: 'PK_usage_minutely' },
    operation: { type: 'varchar', length: 128, primary: true, primaryKeyConstraintName: 'PK_usage_minutely' },
    ...Object.fromEntries(MINUTE_VALUE_COLUMNS.map((name) => [name, BIGINT_ZERO])),
  },
});

export const USAGE_ENTITIES = [UsageHourlyEntity, UsageDailyEntity, UsageMinutelyEntity];
