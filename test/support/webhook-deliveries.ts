import { randomUUID } from 'node:crypto';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { GATEWAY_DATA_SOURCE, schemaOf } from '../../apps/gateway/src/database/data-source.options';
import { TEST_EVENT_TYPE } from '../../apps/gateway/src/webhooks/webhook-events';
import { newDelivery } from '../../apps/gateway/src/webhooks/webhook-endpoints.service';
import { WebhookDeliveryEntity } from '../../apps/gateway/src/webhooks/webhook-tables';
import type { GatewayUnderTest } from './gateway';

/**
 * A delivery to a fleet-wide endpoint, written as the worker's fan-out writes one (a dispatched outbox message, a
 * pending delivery of it): the admin API makes none on demand (a test event is a consumer's endpoint's), and a
 * threshold crossing takes a burst of /v1 requests. Its id, for the routes that name a fleet-wide delivery.
 */
export async function seedFleetDelivery(
  gateway: GatewayUnderTest,
  endpointId: string,
  consumer = 'seeded-consumer',
): Promise<string> {
  const source = gateway.app.get<DataSource>(getDataSourceToken(GATEWAY_DATA_SOURCE), { strict: false });
  const now = new Date();
  const messageId = randomUUID();
  const payload = {
    id: randomUUID(),
    type: TEST_EVENT_TYPE,
    consumer,
    endpoint: endpointId,
    createdAt: now.toISOString(),
  };
  const [message]: Array<{ seq: string }> = await source.query(
    `INSERT INTO "${schemaOf(source)}"."outbox_messages" (id, kind, consumer, payload, created_at, available_at, state, attempts) ` +
      `VALUES ($1, $2, $3, $4::jsonb, $5, $5, 'dispatched', 0) RETURNING seq`,
    [messageId, TEST_EVENT_TYPE, consumer, JSON.stringify(payload), now],
  );
  const delivery = newDelivery({ messageId, kind: TEST_EVENT_TYPE, consumer, messageSeq: message.seq }, now, {
    endpointId,
  });
  await source.manager.insert(WebhookDeliveryEntity, delivery);
  return delivery.id;
}
