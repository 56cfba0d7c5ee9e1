import { CLOUDEVENTS_BATCH_CONTENT_TYPE, cloudEventsBatchBody, toCloudEvent } from './cloudevents.formatter';
import { aggregateId, UsageAggregate } from './usage-aggregate';

const start = Date.parse('2026-11-24T15:00:00Z');
const ok: UsageAggregate = {
  consumer: 'acme',
  operation: '*',
  outcome: 'ok',
  bucket: 'hour',
  start,
  count: 42,
  credits: null,
};
const options = { source: 'urn:petstore:gateway:eu-1', type: 'petstore.api.usage' };

describe('the CloudEvents formatter (OpenMeter: POST /api/v1/events)', () => {
  it('writes a structured CloudEvents 1.0 event: id = aggregate id, subject = consumer, time = bucket start', () => {
    expect(toCloudEvent(ok, options)).toEqual({
      specversion: '1.0',
      id: aggregateId(ok),
      source: 'urn:petstore:gateway:eu-1',
      type: 'petstore.api.usage',
      subject: 'acme',
      time: '2026-11-24T15:00:00.000Z',
      datacontenttype: 'application/json',
      data: { operation: '*', outcome: 'ok', bucket: 'hour', count: 42 },
    });
  });

  it('carries credits when the aggregate has them', () => {
    expect(toCloudEvent({ ...ok, credits: 7 }, options).data).toEqual({
      operation: '*',
      outcome: 'ok',
      bucket: 'hour',
      count: 42,
      credits: 7,
    });
  });

  it('writes a batch as one JSON array, in order, under the batch content type', () => {
    const limited: UsageAggregate = { ...ok, outcome: 'rate_limited', count: 3 };
    const body = JSON.parse(cloudEventsBatchBody([ok, limited], options)) as Array<{ id: string; data: unknown }>;
    expect(body.map((event) => event.id)).toEqual([aggregateId(ok), aggregateId(limited)]);
    expect(body[1].data).toEqual({ operation: '*', outcome: 'rate_limited', bucket: 'hour', count: 3 });
    expect(CLOUDEVENTS_BATCH_CONTENT_TYPE).toBe('application/cloudevents-batch+json');
  });

  it('gives the same event (the same id) when the same aggregate is formatted again', () => {
    expect(cloudEventsBatchBody([ok], options)).toBe(cloudEventsBatchBody([{ ...ok }], options));
  });
});
