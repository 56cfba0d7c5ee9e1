import { ExecutionContext, HttpException, Injectable } from '@nestjs/common';
import { ThrottlerGuard } from '@nestjs/throttler';
import type { ThrottlerLimitDetail } from '@nestjs/throttler';
import type { Request } from 'express';

/** The address a request came from (behind nginx, the client's: PORTAL_TRUST_PROXY). */
export function addressTracker(request: Request): string {
  return `ip:${request.ip ?? 'unknown'}`;
}

/** The account a form names: its email as typed, lower-cased (known or not: nothing tells them apart). */
export function accountTracker(request: Request): string {
  const email = (request.body as { email?: unknown } | undefined)?.email;
  return `account:${typeof email === 'string' ? email.trim().toLowerCase().slice(0, 254) : ''}`;
}

/** Sign-in and sign-up throttled per address and per account; past the limit, a page that says how long to wait. */
@Injectable()
export class SignInThrottlerGuard extends ThrottlerGuard {
  protected override async throwThrottlingException(
    _context: ExecutionContext,
    detail: ThrottlerLimitDetail,
  ): Promise<void> {
    const minutes = Math.max(1, Math.ceil(detail.timeToBlockExpire / 60));
    throw new HttpException(`Too many attempts. Wait ${minutes} minute${minutes === 1 ? '' : 's'} and try again.`, 429);
  }
}
