import { AdminTokenEntity } from './admin-token.entity';
import { AuditEntryEntity } from './audit-entry.entity';

/** The access room's tables: admin tokens and the audit log. */
export const ACCESS_ENTITIES = [AdminTokenEntity, AuditEntryEntity];
