import { ClientBindingEntity } from './client-binding.entity';

/** The client bindings' table (database/migrations creates it; the drift check compares). */
export const CLIENT_BINDING_ENTITIES = [ClientBindingEntity];
