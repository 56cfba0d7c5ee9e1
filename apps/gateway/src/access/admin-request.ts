import type { Request } from 'express';
import { AdminRequestContext, AdminRequestOrigin } from './admin-context';

/** An admin API request, as the admin app's middleware and guard leave it. */
export interface AdminRequest extends Request {
  /** Where the call comes from: set by the admin app's first middleware. */
  adminOrigin: AdminRequestOrigin;
  /** Who makes it too: set by AdminTokenGuard once the token is accepted; absent before that. */
  adminContext?: AdminRequestContext;
}

/** The call's complete context; after the guard only (every admin route has it): its absence is a bug. */
export function adminContextOf(request: AdminRequest): AdminRequestContext {
  if (!request.adminContext)
    throw new Error('No admin request context: AdminTokenGuard has not accepted this request.');
  return request.adminContext;
}
