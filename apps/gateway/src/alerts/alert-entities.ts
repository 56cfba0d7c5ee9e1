import { LeaseEntity } from './lease-table';
import { OutboxMessageEntity } from './outbox-message-table';
import { ThresholdEventEntity } from './threshold-event-table';

export const ALERT_ENTITIES = [ThresholdEventEntity, OutboxMessageEntity, LeaseEntity];
