import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Consumer } from '../consumers/consumer';

/** The operation of a request no route takes (a 404, 405 or undecodable path): none of the API's operationIds. */
export const UNROUTED_OPERATION = '(unrouted)';

/** Each request's exchange, for what reads a request after the pipeline (the request log line); never on the request itself. */
const exchanges = new WeakMap<object, ApiExchange>();

/**
 * One /v1 request on its way through the pipeline (apps/gateway/src/pipeline): what each step learns and a
 * later one reads, in one typed object passed along, rather than fields and symbols put on the request.
 */
export class ApiExchange {
  /** The authenticated consumer; unset until authentication accepts the key (and for every refused request). */
  consumer?: Consumer;
  /** The id of the key it came with (never the key), for the usage history. */
  keyId?: string;
  /** The operation it was for (its route's operationId), once the route is known; UNROUTED_OPERATION for none. */
  operation: string = UNROUTED_OPERATION;
  /** The credits its admission spent (docs/billing.md): 0 unless the consumer has credits and the request cost some. */
  creditsSpent = 0;
  /**
   * The answer's header fields as `[name, value, ...]`, set by the steps (setHeader) and written once with the
   * status (`writeHead` with this array: Node then keeps no per-header map, ~20 fields a request). A writer that
   * uses the response's own header API (the exception filter, CORS's preflight) gets them first
   * (moveHeadersToResponse).
   */
  readonly headers: string[];

  constructor(
    readonly request: Request,
    readonly response: Response,
    /** The request target's path (no query), as received: `/v1/pets/42`. */
    readonly path: string,
    /** The fields every answer starts with (the pipeline's: request id, security headers, Cache-Control); kept. */
    headers: string[] = [],
  ) {
    this.headers = headers;
    exchanges.set(request, this);
  }

  /** Adds a header field to the answer (a name set twice is sent twice: each step sets its own names). */
  setHeader(name: string, value: string): void {
    this.headers.push(name, value);
  }

  /** Hands the fields set so far to the response's header API, for a writer that uses it. */
  moveHeadersToResponse(): void {
    const { headers, response } = this;
    if (response.headersSent) return;
    for (let i = 0; i < headers.length; i += 2) response.setHeader(headers[i], headers[i + 1]);
    headers.length = 0;
  }

  /** The exchange of a /v1 request the pipeline took, if any. */
  static of(request: object): ApiExchange | undefined {
    return exchanges.get(request);
  }
}

/** The exchange of the request `context` was built for by the pipeline, or undefined (a request Nest's router took). */
export function exchangeOf(context: ExecutionContext): ApiExchange | undefined {
  const candidate: unknown = context.getArgByIndex(2);
  return candidate instanceof ApiExchange ? candidate : undefined;
}

/** What `@Exchange()` resolves to; the pipeline recognises the decorator by this function. */
export const resolveExchange = (_data: unknown, context: ExecutionContext): ApiExchange | undefined =>
  exchangeOf(context);

/** A /v1 handler's argument: the exchange the pipeline carries (the consumer, the key, the request and response). */
export const Exchange = createParamDecorator(resolveExchange);
