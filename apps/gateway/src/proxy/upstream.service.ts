import { ApiError, BODY_LIMIT_BYTES, assertDeclaredLengthWithin, readRequestBody } from '@app/errors';
import { AppMetrics, INTERNAL_SECRET_HEADER } from '@app/platform';
import { propagateUnsampled } from '@app/platform/tracing/sampling-first';
import { Counter } from 'prom-client';
import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { IncomingHttpHeaders } from 'node:http';
import { Dispatcher, Pool } from 'undici';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import type { ApiExchange } from '../routing/api-exchange';
import { publicLinkField } from './next-link';
import { publicLocation } from './public-location';

/** Request headers that go upstream; everything else stays at the edge (Authorization above all). */
const FORWARDED_REQUEST_HEADERS = ['content-type', 'accept', 'accept-language', 'x-request-id'] as const;
/**
 * Response headers that come back; hop-by-hop ones (connection, keep-alive, transfer-encoding, ...) never do, nor
 * Cache-Control: the edge decides it for every /v1 answer (API_CACHE_CONTROL).
 */
const RETURNED_RESPONSE_HEADERS = ['content-type', 'content-language', 'allow', 'retry-after'] as const;

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
/** Seconds a client is asked to wait when the pets service cannot be reached (about one readiness period). */
const UPSTREAM_RETRY_AFTER_SECONDS = 5;
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * The path and query to send upstream, as the router parsed them: a request line in absolute form
 * (`GET http://host/v1/pets HTTP/1.1`, which RFC 9112 says servers must accept) loses its scheme and authority.
 * No other normalisation, so the pets service routes exactly what the gateway routed.
 */
export function requestTarget(originalUrl: string): string {
  if (originalUrl.startsWith('/')) return originalUrl;
  const rest = originalUrl.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/**
 * Whether the request arrived whole and its client can still be answered. A request whose body the HTTP parser
 * refused (broken chunked framing: the server's clientError handler has answered 400 and closed the connection)
 * is not complete; one whose client went away meanwhile (a half-close, a reset) is aborted, its response
 * destroyed. Neither may reach the pets service: a compressed body goes through body-parser, which reads nothing
 * from a request whose socket no longer reads (it takes the body for one already read) and reports no error, so
 * either would go upstream with an empty body.
 */
function receivedWhole(request: Request, response: Response): boolean {
  return request.complete && !request.readableAborted && !response.destroyed;
}

/** The pets service's answer, read whole (its pages are small: at most 100 animals). */
interface UpstreamAnswer {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * Collects one answer through undici's dispatch handler API: no response stream, no body mixin, no per-chunk
 * promise, which `pool.request()` + `body.arrayBuffer()` cost on every request.
 */
class AnswerCollector implements Dispatcher.DispatchHandler {
  private statusCode = 0;
  private headers: IncomingHttpHeaders = {};
  private readonly chunks: Buffer[] = [];

  constructor(
    private readonly resolve: (answer: UpstreamAnswer) => void,
    private readonly reject: (error: Error) => void,
  ) {}

  /** Declares the handler API (undici takes a handler without it for its deprecated one). */
  onRequestStart(): void {}

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.statusCode = statusCode;
    this.headers = headers;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    const body = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    this.resolve({ statusCode: this.statusCode, headers: this.headers, body });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.reject(error);
  }
}

/**
 * Forwards a request to the pets service over a keep-alive pool and writes its answer back unchanged:
 * status, body and content headers. The consumer's identity goes upstream in headers set here, overwriting
 * anything the client sent under those names.
 */
@Injectable()
export class UpstreamService implements OnApplicationShutdown {
  private readonly logger = new Logger('Upstream');
  private readonly pool: Pool;
  private readonly internalSecret?: string;
  /** PUBLIC_ORIGIN, or '' for relative links. */
  private readonly publicOrigin: string;
  private readonly upstreamErrors: Counter<'kind'>;

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig, metrics: AppMetrics) {
    this.upstreamErrors = new Counter({
      name: 'upstream_errors_total',
      help: 'Requests the pets service did not answer, by kind (timeout, unavailable, bad_gateway).',
      labelNames: ['kind'],
      registers: [metrics.registry],
    });
    this.internalSecret = config.internalSecret;
    this.publicOrigin = config.publicOrigin ?? '';
    this.pool = new Pool(config.petsUrl, {
      connections: config.upstream.connections,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      headersTimeout: config.upstream.timeoutMs,
      bodyTimeout: config.upstream.timeoutMs,
      connect: { timeout: config.upstream.connectTimeoutMs },
    });
  }

  async forward(exchange: ApiExchange, path: string): Promise<void> {
    const { request, response, consumer } = exchange;
    const headers: Record<string, string> = {};
    for (const name of FORWARDED_REQUEST_HEADERS) {
      const value = request.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    if (consumer) {
      headers['x-consumer-name'] = consumer.name;
      headers['x-consumer-plan'] = consumer.plan;
    }
    if (this.internalSecret) headers[INTERNAL_SECRET_HEADER] = this.internalSecret;
    propagateUnsampled(request, headers);
    assertDeclaredLengthWithin(request);
    // The body's bytes as they came (the pets service parses and validates them once), read only now that the
    // request has passed authentication and rate limiting, so that a 413 carries the rate-limit headers too.
    const body = await readRequestBody(request, BODY_LIMIT_BYTES);
    if (!receivedWhole(request, response))
      throw new ApiError('MALFORMED_REQUEST', 'The request was not received whole.', { Connection: 'close' });

    let upstream: UpstreamAnswer;
    try {
      // HEAD is answered from a GET, so that its headers (Content-Length above all) are the ones GET would have.
      const method = request.method === 'HEAD' ? 'GET' : (request.method as 'GET' | 'POST');
      upstream = await new Promise<UpstreamAnswer>((resolve, reject) => {
        this.pool.dispatch({ path, method, headers, body }, new AnswerCollector(resolve, reject));
      });
    } catch (error) {
      throw this.toGatewayError(error as Error & { code?: string }, request);
    }
    const payload = upstream.body;

    // The fields the steps set, then the answer's own, written with the status in one call (ApiExchange.headers).
    const fields = exchange.headers;
    for (const name of RETURNED_RESPONSE_HEADERS) {
      // Typed as one string, but undici hands a repeated field over as an array.
      const value = upstream.headers[name] as string | string[] | undefined;
      if (typeof value === 'string') fields.push(name, value);
      else if (value !== undefined) for (const one of value) fields.push(name, one);
    }
    if (upstream.headers.link !== undefined) {
      const link = publicLinkField(upstream.headers.link, requestTarget(request.originalUrl), path, this.publicOrigin);
      if (link) fields.push('link', link);
    }
    const location = publicLocation(upstream.headers.location);
    if (location) fields.push('location', location);
    fields.push('content-length', String(payload.length));
    response.writeHead(upstream.statusCode, fields);
    response.end(request.method === 'HEAD' ? undefined : payload);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool.close();
  }

  private toGatewayError(error: Error & { code?: string }, request: Request): ApiError {
    const code = error.code ?? (error.cause as { code?: string } | undefined)?.code ?? '';
    this.logger.warn(
      `${request.method} ${request.originalUrl.split('?')[0]} upstream failure ${code || error.name}: ${error.message}`,
    );
    if (TIMEOUT_CODES.has(code)) {
      this.upstreamErrors.inc({ kind: 'timeout' });
      return new ApiError('GATEWAY_TIMEOUT', 'The pets service did not answer in time.');
    }
    if (UNREACHABLE_CODES.has(code)) {
      this.upstreamErrors.inc({ kind: 'unavailable' });
      // The connection was refused: the request certainly never reached the service, so any retry is safe.
      return new ApiError('SERVICE_UNAVAILABLE', 'The pets service is unavailable.', {
        'Retry-After': String(UPSTREAM_RETRY_AFTER_SECONDS),
      });
    }
    this.upstreamErrors.inc({ kind: 'bad_gateway' });
    return new ApiError('BAD_GATEWAY', 'The pets service failed to answer.');
  }
}
