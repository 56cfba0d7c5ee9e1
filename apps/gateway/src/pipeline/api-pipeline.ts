import { AllExceptionsFilter, ApiError, unmatchedRoute } from '@app/errors';
import { HttpAppPipeline, REQUEST_ID_HEADER } from '@app/platform';
import { recordEdgeRoute } from '@app/platform/tracing/edge-outcome';
import { runQuietlyWhenUnsampled } from '@app/platform/tracing/unsampled';
import { Injectable, Logger, Type } from '@nestjs/common';
import { ApplicationConfig, Reflector } from '@nestjs/core';
import cors from 'cors';
import type { Express, Request, Response } from 'express';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { addressNotAllowed, ApiKeyAuthenticator, insufficientScope } from '../auth/api-key-authenticator';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { Clock } from '../clock';
import { executionContext, operationIdOf } from '../nest-internals';
import { ClientAddressResolver } from '../rate-limit/client-address';
import { PlanThrottlerGuard } from '../rate-limit/plan-throttler.guard';
import { ApiExchange } from '../routing/api-exchange';
import { apiPathOf, RouteMatch, RouteTable, UNROUTED } from '../routing/route-table';
import { writesExchangeHeaders } from '../routing/exchange-headers';
import { applySunset, sunsetPolicyOf, SunsetPolicy } from '../routing/sunset';
import { UsageService } from '../usage/usage.service';
import { API_CACHE_CONTROL } from '../routing/api-cache-control';

type Listener = (request: IncomingMessage, response: ServerResponse) => void;

const noop = (): void => undefined;

/** The app's global guards the pipeline stands in for: ApiKeyGuard's deny-by-default is its authentication. */
const SUPERSEDED_GLOBAL_GUARDS: readonly Type[] = [ApiKeyGuard];

/** A CORS preflight (Fetch standard): OPTIONS with Origin and Access-Control-Request-Method. Browsers send no credentials with it. */
const isPreflight = (request: IncomingMessage): boolean =>
  request.method === 'OPTIONS' &&
  request.headers.origin !== undefined &&
  request.headers['access-control-request-method'] !== undefined;

/**
 * The one way into /v1. Every request under /v1, whatever its shape (any case, a trailing slash, HEAD, OPTIONS,
 * an Origin, an absolute-form target, a path or method no route takes), runs this sequence, once:
 *
 *   0. the steps every request of the app takes (request id, metrics, request log, security headers), the /v1
 *      Cache-Control, and CORS: a preflight is answered here (204), before authentication, and counts nothing;
 *   1. identify the route (RouteTable: the controllers' own routes, as Express's router would match them);
 *   2. authenticate the API key or access token (ApiKeyAuthenticator); a valid one used from an address its
 *      consumer (or itself) is not allowed to be used from is treated as no credential at all from here on;
 *   3. decide the limits, exactly once (PlanThrottlerGuard.decide: the consumer's plan windows, or the address's
 *      anonymous window for a request without a valid key), and set the rate-limit headers;
 *   4. answer: the refusal (401, or 403 ADDRESS_NOT_ALLOWED; a key that cannot be checked now has had its 503
 *      before step 3, counted nowhere), the 404/405/400 of a request no route takes, or the route's handler (deprecation headers
 *      first), which forwards to the pets service;
 *   5. after the answer, whoever wrote it: the usage history (UsageService.track), metrics and the log line.
 *
 * What the steps share travels in one ApiExchange. It is installed as the HTTP server's request listener, in
 * front of Express, which keeps everything outside /v1 (health, the docs); Express's router never sees a /v1
 * request, so there is no second entrance to keep equal to this one. The one exception filter writes every
 * error. Framework internals it needs come from nest-internals.ts only.
 */
@Injectable()
export class ApiPipeline {
  private readonly logger = new Logger('ApiPipeline');
  private readonly sunsets = new WeakMap<object, SunsetPolicy | undefined>();
  private readonly headerWriters = new WeakMap<object, boolean>();
  private readonly operations = new WeakMap<object, string | undefined>();

  constructor(
    private readonly routes: RouteTable,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly limits: PlanThrottlerGuard,
    private readonly addresses: ClientAddressResolver,
    private readonly usage: UsageService,
    private readonly clock: Clock,
    private readonly reflector: Reflector,
    private readonly appConfig: ApplicationConfig,
  ) {}

  /** Takes every /v1 request off the server, ahead of Express (`express`), which keeps the rest. */
  install(server: Server, express: Express, app: HttpAppPipeline): void {
    this.refuseUnappliedGlobals();
    const listeners = server.listeners('request');
    if (listeners.length !== 1)
      throw new Error(`Expected one request listener on the gateway's server, found ${listeners.length}`);
    const fallback = listeners[0] as Listener;
    const handle = this.handler(express, app, fallback);
    server.removeListener('request', fallback);
    server.on('request', handle);
  }

  /** The app's global guards, interceptors and pipes: only those whose work the pipeline does itself. */
  private refuseUnappliedGlobals(): void {
    const guards = [
      ...this.appConfig.getGlobalGuards(),
      ...this.appConfig.getGlobalRequestGuards().map((wrapper) => wrapper.instance),
    ];
    const unapplied = [
      ...guards.filter((guard) => !SUPERSEDED_GLOBAL_GUARDS.some((type) => guard instanceof type)),
      ...this.appConfig.getGlobalInterceptors(),
      ...this.appConfig.getGlobalRequestInterceptors(),
      ...this.appConfig.getGlobalPipes(),
      ...this.appConfig.getGlobalRequestPipes(),
    ];
    if (unapplied.length > 0) {
      const names = unapplied.map((enhancer) => (enhancer as object).constructor.name).join(', ');
      throw new Error(`The /v1 pipeline does not apply the global ${names}: apply it in ApiPipeline, or not globally.`);
    }
  }

  private handler(express: Express, app: HttpAppPipeline, fallback: Listener): Listener {
    const { assignRequestId, observers } = app.headerless;
    const filter = app.filter;
    const corsHandler = app.cors ? cors(app.cors) : undefined;
    // Every answer's first fields, built once: the request id's value is filled in per request.
    const firstFields = [REQUEST_ID_HEADER, '', ...app.headerless.securityHeaders, 'cache-control', API_CACHE_CONTROL];

    const run = (exchange: ApiExchange): void => {
      const { request, response } = exchange;
      // What Express's app.handle would set and the shared steps read; the objects stay Node's own (Express
      // swaps both prototypes per request, which V8 pays for on every later access): only an error gets them.
      request.app = express;
      request.originalUrl = request.url;
      request.baseUrl = '';
      const matched = this.routes.match(request.method, exchange.path);
      const template =
        matched.kind === 'route' ? matched.route.path : matched.kind === 'not-found' ? undefined : matched.template;
      if (matched.kind === 'route') exchange.operation = matched.route.operation;
      if (template !== undefined) request.route = { path: template };
      exchange.headers[1] = assignRequestId(request);
      for (let i = 0; i < observers.length; i += 1) observers[i](request, response, noop);
      if (corsHandler && request.headers.origin !== undefined) {
        // A preflight is answered by the cors package (204) and ends here; on any other request it only sets the
        // headers (synchronously, for a list of origins). An OPTIONS that is no preflight gets none: a 405 follows.
        if (isPreflight(request)) {
          exchange.moveHeadersToResponse();
          return corsHandler(request, response, noop);
        }
        if (request.method !== 'OPTIONS') corsHandler(request, response, noop);
      }
      if (template !== undefined) recordEdgeRoute(request.method, template);
      this.usage.track(exchange, response);
      this.serve(exchange, matched).catch((error: unknown) => this.answerError(express, filter, exchange, error));
    };

    return (incoming, outgoing) => {
      const path = apiPathOf(incoming.url);
      if (path === undefined) return fallback(incoming, outgoing);
      runQuietlyWhenUnsampled(() =>
        run(new ApiExchange(incoming as Request, outgoing as unknown as Response, path, firstFields.slice())),
      );
    };
  }

  /** Steps 2 to 4. */
  private async serve(exchange: ApiExchange, matched: RouteMatch): Promise<void> {
    const authentication = await this.authenticator.authenticate(exchange.request.headers.authorization);
    // A valid credential from an address its consumer (or the key or binding) does not allow is refused as a bad
    // key is: the consumer is never named on the exchange, so nothing is counted as the consumer (no window, quota,
    // credits, usage or threshold event), and the request counts against the address's anonymous window, so a
    // stolen credential used from elsewhere is throttled and then banned like guessed keys. The address by the rate
    // limits' trusted-proxy rule; resolved only for a restricted credential.
    let addressRefusal: ApiError | undefined;
    if (authentication.outcome === 'valid' && authentication.addresses) {
      const address = this.addresses.address(exchange.request);
      if (!authentication.addresses.allows(address)) addressRefusal = addressNotAllowed(address?.split('%')[0]);
    }
    if (authentication.outcome === 'valid' && !addressRefusal) {
      exchange.consumer = authentication.consumer;
      exchange.keyId = authentication.keyId;
    }
    // A key that cannot be checked right now is neither valid nor invalid: its 503 counts nothing against the
    // address, so that an outage does not spend, and then ban, the anonymous window of everyone behind one NAT
    // address. It tells a guesser nothing and costs no query (KeyCache refuses it on its budget, or on an error).
    if (authentication.outcome === 'unchecked') throw authentication.refusal;
    // An access token whose scopes do not allow the operation is counted on its consumer as a request no route
    // takes (its windows, not the operation's cost), then refused with 403.
    const outOfScope =
      authentication.outcome === 'valid' && !addressRefusal && authentication.grant && matched.kind === 'route'
        ? insufficientScope(authentication.grant, this.operationOf(matched.route.handler))
        : undefined;
    const route = matched.kind === 'route' && !outOfScope ? matched.route : UNROUTED;
    await this.limits.decide(
      executionContext([exchange.request, exchange.response, exchange], route.controller, route.handler),
    );
    if (authentication.outcome === 'refused') throw authentication.refusal;
    if (addressRefusal) throw addressRefusal;
    if (outOfScope) throw outOfScope;

    if (matched.kind === 'not-found' || matched.kind === 'method-not-allowed') {
      throw unmatchedRoute(exchange.request.method, exchange.path, matched.kind === 'not-found' ? [] : matched.allow);
    }
    if (matched.kind === 'undecodable')
      throw new ApiError('VALIDATION_FAILED', `Failed to decode param '${matched.segment}'`);

    const sunset = this.sunsetOf(matched.route.handler);
    if (sunset) applySunset(sunset, exchange, this.clock.now());
    if (!this.writesHeaders(matched.route.handler, matched.route.controller)) exchange.moveHeadersToResponse();
    await matched.route.invoke({
      request: exchange.request,
      response: exchange.response,
      url: exchange.request.url,
      params: matched.params,
      custom: exchange,
    });
  }

  /** A route's @Sunset policy, read once per handler. */
  private sunsetOf(handler: object): SunsetPolicy | undefined {
    if (!this.sunsets.has(handler)) this.sunsets.set(handler, sunsetPolicyOf(this.reflector, handler));
    return this.sunsets.get(handler);
  }

  /** A route's operationId (what a token's scopes are mapped to), read once per handler. */
  private operationOf(handler: object): string | undefined {
    if (!this.operations.has(handler)) this.operations.set(handler, operationIdOf(handler));
    return this.operations.get(handler);
  }

  /** Whether a route's handler writes ApiExchange.headers itself (@WritesExchangeHeaders), read once per handler. */
  private writesHeaders(handler: object, controller: object): boolean {
    let writes = this.headerWriters.get(handler);
    if (writes === undefined) {
      writes = writesExchangeHeaders(this.reflector, handler, controller);
      this.headerWriters.set(handler, writes);
    }
    return writes;
  }

  /** The one exception filter writes the Error body, through Express's response methods. */
  private answerError(express: Express, filter: AllExceptionsFilter, exchange: ApiExchange, error: unknown): void {
    const { request, response } = exchange;
    try {
      exchange.moveHeadersToResponse();
      Object.setPrototypeOf(request, express.request);
      Object.setPrototypeOf(response, express.response);
      (request as unknown as { res: Response }).res = response;
      (response as unknown as { req: Request }).req = request;
      response.locals ??= Object.create(null) as Response['locals'];
      filter.catch(error, executionContext([request, response, noop]));
    } catch (failure) {
      // Never an unhandled rejection (it would stop the process): the connection goes instead of an answer.
      this.logger.error(
        `Could not answer ${request.method} ${exchange.path}`,
        failure instanceof Error ? failure.stack : String(failure),
      );
      response.destroy();
    }
  }
}
