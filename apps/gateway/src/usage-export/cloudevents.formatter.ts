import { aggregateId, UsageAggregate } from './usage-aggregate';

/** OpenMeter's batch ingest (`POST /api/v1/events`) takes a JSON array of structured CloudEvents under this type. */
export const CLOUDEVENTS_BATCH_CONTENT_TYPE = 'application/cloudevents-batch+json';

export interface UsageCloudEventData {
  operation: string;
  outcome: string;
  /** `minute` or `hour`: the length of the bucket `time` starts. */
  bucket: string;
  count: number;
  /** Absent where the history does not record credits at this grain. */
  credits?: number;
}

/** A CloudEvents 1.0 event in its JSON (structured) form. */
export interface UsageCloudEvent {
  specversion: '1.0';
  id: string;
  source: string;
  type: string;
  subject: string;
  time: string;
  datacontenttype: 'application/json';
  data: UsageCloudEventData;
}

export interface CloudEventsOptions {
  /** This gateway fleet (USAGE_EVENTS_SOURCE): with `id`, what OpenMeter deduplicates on. */
  source: string;
  /** USAGE_EVENTS_NAME, `petstore.api.usage` by default. */
  type: string;
}

/** One aggregate as a CloudEvent: the consumer is the subject, the bucket's start the time. */
export function toCloudEvent(aggregate: UsageAggregate, options: CloudEventsOptions): UsageCloudEvent {
  const data: UsageCloudEventData = {
    operation: aggregate.operation,
    outcome: aggregate.outcome,
    bucket: aggregate.bucket,
    count: aggregate.count,
  };
  if (aggregate.credits !== null) data.credits = aggregate.credits;
  return {
    specversion: '1.0',
    id: aggregateId(aggregate),
    source: options.source,
    type: options.type,
    subject: aggregate.consumer,
    time: new Date(aggregate.start).toISOString(),
    datacontenttype: 'application/json',
    data,
  };
}

/** A batch request's body: the events as one JSON array (CloudEvents' JSON batch format). */
export function cloudEventsBatchBody(aggregates: readonly UsageAggregate[], options: CloudEventsOptions): string {
  return JSON.stringify(aggregates.map((aggregate) => toCloudEvent(aggregate, options)));
}
