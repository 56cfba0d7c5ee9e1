import { AdminTokenEntity } from './admin-token.entity';
import { ApiKeyEntity } from './api-key.entity';
import { AuditEntryEntity } from './audit-entry.entity';
import { ConsumerEntity } from './consumer.entity';
import { PlanRequestEntity } from './plan-request.entity';

/** The gateway's tables, as TypeORM entities (database/migrations creates them; the drift check compares). */
export const CONSUMER_ENTITIES = [ConsumerEntity, ApiKeyEntity, AdminTokenEntity, AuditEntryEntity, PlanRequestEntity];
