import { SetMetadata } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';

const WRITES_EXCHANGE_HEADERS = 'gateway:writes-exchange-headers';

/**
 * Marks /v1 handlers (or a controller's) that write their answer with the fields the pipeline's steps collected
 * (ApiExchange.headers, in one writeHead: UpstreamService.forward does). Every other handler gets those fields
 * moved to the response before it runs, so no handler can answer without the request id, the security headers or
 * the rate-limit headers: the fast path is opted into, never the default.
 */
export const WritesExchangeHeaders = (): ClassDecorator & MethodDecorator => SetMetadata(WRITES_EXCHANGE_HEADERS, true);

/** Whether `handler` (of `controller`) writes ApiExchange.headers itself. */
export function writesExchangeHeaders(reflector: Reflector, handler: object, controller: object): boolean {
  return (
    reflector.getAllAndOverride<boolean | undefined>(WRITES_EXCHANGE_HEADERS, [handler, controller] as never) === true
  );
}
