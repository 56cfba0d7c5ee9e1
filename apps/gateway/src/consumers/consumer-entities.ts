import { ApiKeyEntity } from './api-key.entity';
import { ConsumerEntity } from './consumer.entity';

/** The gateway's tables, as TypeORM entities (database/migrations creates them; the drift check compares). */
export const CONSUMER_ENTITIES = [ConsumerEntity, ApiKeyEntity];
