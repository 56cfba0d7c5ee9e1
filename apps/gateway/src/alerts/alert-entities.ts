import { OutboxMessageEntity } from './outbox-message.entity';
import { ThresholdEventEntity } from './threshold-event.entity';

export const ALERT_ENTITIES = [ThresholdEventEntity, OutboxMessageEntity];
