import { ExecutionContext, HttpException, Injectable, Logger } from '@nestjs/common';
import { ThrottlerGuard } from '@nestjs/throttler';
import type { ThrottlerLimitDetail } from '@nestjs/throttler';
import type { Request } from 'express';
import { normalizeEmail } from '../credentials/account-input';
import { clientBlock, emailHash } from './client-address';

/** The address block a request came from: an IPv4 address, an IPv6 /64 (one host holds a whole /64). */
export function addressTracker(request: Request): string {
  return `ip:${clientBlock(request)}`;
}

/** The account a form names: its typed email's hash (known or not: nothing tells them apart). */
export function accountTracker(request: Request): string {
  return `account:${emailHash(normalizeEmail((request.body as { email?: unknown } | undefined)?.email).slice(0, 254))}`;
}

/**
 * The account forms' throttles (per address block, and per email on sign-up and reset): past the limit, a page
 * that says how long to wait, and a warn line naming the throttle, the address block and the email's hash.
 */
@Injectable()
export class SignInThrottlerGuard extends ThrottlerGuard {
  private readonly signInLogger = new Logger('SignIn');

  protected override async throwThrottlingException(
    context: ExecutionContext,
    detail: ThrottlerLimitDetail,
  ): Promise<void> {
    const request = context.switchToHttp().getRequest<Request>();
    this.signInLogger.warn({
      event: 'portal.form.throttled',
      path: request.path,
      throttle: detail.tracker.startsWith('ip:') ? 'address' : 'email',
      account: accountTracker(request).slice('account:'.length),
      address: clientBlock(request),
    });
    const minutes = Math.max(1, Math.ceil(detail.timeToBlockExpire / 60));
    throw new HttpException(`Too many attempts. Wait ${minutes} minute${minutes === 1 ? '' : 's'} and try again.`, 429);
  }
}
