import { ApiKeyEntity } from './api-key.entity';
import { ConsumerEntity } from './consumer.entity';

/** The consumer aggregate's tables: a consumer and its keys (database/migrations creates them; the drift check compares). */
export const CONSUMER_ENTITIES = [ConsumerEntity, ApiKeyEntity];
