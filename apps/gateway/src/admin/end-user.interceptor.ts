import { isIP } from 'node:net';
import { ApiError } from '@app/errors';
import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Observable } from 'rxjs';
import { AdminActor, EndUser } from '../access/admin-context';
import { adminContextOf, AdminRequest } from '../access/admin-request';
import { AuditLog } from '../access/audit-log';

export const ON_BEHALF_OF_HEADER = 'x-on-behalf-of';
export const END_USER_ADDRESS_HEADER = 'x-end-user-address';
/** Room for `account:<uuid> <email>` with the longest address an email may have (254). */
export const ON_BEHALF_OF_MAX = 320;
/** Printable ASCII: a header carries bytes, and the audit shows what was sent (percent-encode anything else). */
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

function single(value: string | string[] | undefined, header: string): string | undefined {
  if (Array.isArray(value)) throw new ApiError('VALIDATION_FAILED', `${header} must be sent once`);
  return value;
}

/**
 * The end user an admin call names (X-On-Behalf-Of, X-End-User-Address), or undefined when it names none. 400 for
 * a value that is not a label or an address; 403 when the actor may not act for users (only root and tokens
 * created with `actsForUsers`): a channel only the web apps' tokens can use, so no other caller can put a name in
 * the audit.
 */
export function endUserOf(headers: AdminRequest['headers'], actor: AdminActor): EndUser | undefined {
  const label = single(headers[ON_BEHALF_OF_HEADER], 'X-On-Behalf-Of')?.trim();
  const address = single(headers[END_USER_ADDRESS_HEADER], 'X-End-User-Address')?.trim();
  if (label === undefined && address === undefined) return undefined;
  if (actor.actsForUsers !== true)
    throw new ApiError(
      'FORBIDDEN',
      `Token "${actor.name}" may not name an end user (X-On-Behalf-Of, X-End-User-Address): only tokens created with actsForUsers may.`,
    );
  if (label !== undefined && (label.length > ON_BEHALF_OF_MAX || !PRINTABLE_ASCII.test(label)))
    throw new ApiError('VALIDATION_FAILED', `X-On-Behalf-Of must be 1-${ON_BEHALF_OF_MAX} printable ASCII characters`);
  if (address !== undefined && isIP(address) === 0)
    throw new ApiError('VALIDATION_FAILED', 'X-End-User-Address must be an IPv4 or IPv6 address');
  return { onBehalfOf: label ?? null, address: address ?? null };
}

/**
 * Puts the end user a web app names on the call's context, so that every audit row the call writes names them.
 * Runs before the handler (after the token guard); a refusal of the channel is audited like any other 403.
 */
@Injectable()
export class EndUserInterceptor implements NestInterceptor {
  constructor(private readonly audit: AuditLog) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<AdminRequest>();
    const call = adminContextOf(request);
    try {
      const endUser = endUserOf(request.headers, call.actor);
      // A person's session credential names them on every row it writes (docs/sso.md): no header needed, none taken.
      if (call.actor.person)
        request.adminContext = { ...call, endUser: { onBehalfOf: call.actor.person, address: null } };
      else if (endUser) request.adminContext = { ...call, endUser };
    } catch (error) {
      if (error instanceof ApiError && error.code === 'FORBIDDEN') {
        const route = `${request.method} ${(request.route as { path?: string } | undefined)?.path ?? request.path}`;
        void this.audit.recordDenied(call, 403, {
          route: { before: null, after: route },
          reason: { before: null, after: error.message },
        });
      }
      throw error;
    }
    return next.handle();
  }
}
