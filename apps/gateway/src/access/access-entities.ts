import { AdminTokenEntity } from './admin-token.entity';
import { AuditEntryEntity } from './audit-entry.entity';
import { UsedIdTokenEntity } from './used-id-token.entity';

/** The access room's tables: admin tokens, the audit log, and the ID tokens people signed in with (used once). */
export const ACCESS_ENTITIES = [AdminTokenEntity, AuditEntryEntity, UsedIdTokenEntity];
