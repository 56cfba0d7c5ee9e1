import { UsageExportConfig } from '../config/usage-export.config';
import { CLOUDEVENTS_BATCH_CONTENT_TYPE, cloudEventsBatchBody } from './cloudevents.formatter';
import { inBatches } from './in-batches';
import { lagoBatches, LAGO_BATCH_LIMIT } from './lago.formatter';
import { StripeDelivery, stripeSendDecision } from './stripe-replay-window';
import { STRIPE_FORM_CONTENT_TYPE, stripeFormBody, toStripeMeterEvent } from './stripe.formatter';
import { aggregateId, UsageAggregate } from './usage-aggregate';
import { UsageExportRequest } from './usage-export.sink';

/** Events per CloudEvents batch request. */
export const CLOUDEVENTS_BATCH_SIZE = 100;

/** An aggregate not exported, and why (the worker reports these; none is lost silently). */
export interface UsageExportSkip {
  id: string;
  consumer: string;
  reason: 'not_metered' | 'unmapped' | 'no_value' | 'acknowledged' | 'identifier_expired' | 'too_old' | 'in_future';
}

export interface UsageExportPlan {
  requests: UsageExportRequest[];
  skipped: UsageExportSkip[];
}

const NEVER_SENT: StripeDelivery = { acknowledged: false };

/**
 * The requests that carry `aggregates` to the configured sink, in its format: CloudEvents batches, Lago batches
 * (at most 100 events each), or one form-encoded Stripe request per event, subject to Stripe's window (`stripe`:
 * the time, from the injected Clock, and what the outbox knows of each id's past deliveries; none: never sent).
 */
export function usageExportRequests(
  aggregates: readonly UsageAggregate[],
  config: UsageExportConfig,
  stripe: { now: number; deliveryOf?: (id: string) => StripeDelivery },
): UsageExportPlan {
  const skip = (aggregate: UsageAggregate, reason: UsageExportSkip['reason']): UsageExportSkip => ({
    id: aggregateId(aggregate),
    consumer: aggregate.consumer,
    reason,
  });
  switch (config.format) {
    case 'off':
      return { requests: [], skipped: [] };
    case 'cloudevents': {
      const options = { source: config.source!, type: config.name };
      return {
        requests: inBatches(aggregates, CLOUDEVENTS_BATCH_SIZE).map((batch) => ({
          contentType: CLOUDEVENTS_BATCH_CONTENT_TYPE,
          body: cloudEventsBatchBody(batch, options),
          ids: batch.map(aggregateId),
        })),
        skipped: [],
      };
    }
    case 'lago': {
      const { bodies, unmapped } = lagoBatches(
        aggregates,
        { code: config.name, customers: config.customers },
        LAGO_BATCH_LIMIT,
      );
      return {
        requests: bodies.map((body) => ({
          contentType: 'application/json',
          body: JSON.stringify(body),
          ids: body.events.map((event) => event.transaction_id),
        })),
        skipped: unmapped.map((aggregate) => skip(aggregate, 'unmapped')),
      };
    }
    case 'stripe': {
      const requests: UsageExportRequest[] = [];
      const skipped: UsageExportSkip[] = [];
      const options = {
        eventName: config.name,
        customers: config.customers,
        value: config.stripeValue,
        outcomes: config.stripeOutcomes,
      };
      for (const aggregate of aggregates) {
        const formatted = toStripeMeterEvent(aggregate, options);
        if ('skipped' in formatted) {
          skipped.push(skip(aggregate, formatted.skipped));
          continue;
        }
        const id = formatted.event.identifier;
        const decision = stripeSendDecision(aggregate.start, stripe.deliveryOf?.(id) ?? NEVER_SENT, stripe.now);
        if (!decision.send) skipped.push(skip(aggregate, decision.reason));
        else requests.push({ contentType: STRIPE_FORM_CONTENT_TYPE, body: stripeFormBody(formatted.event), ids: [id] });
      }
      return { requests, skipped };
    }
  }
}
