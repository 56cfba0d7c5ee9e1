import { AllExceptionsFilter } from '@app/errors';
import { HttpAppPipeline } from '@app/platform';
import { recordEdgeRoute } from '@app/platform/tracing/edge-outcome';
import { runQuietlyWhenUnsampled } from '@app/platform/tracing/unsampled';
import { Injectable, Logger, OnModuleInit, Type } from '@nestjs/common';
import { ApplicationConfig, ModuleRef, Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import type { Express, RequestHandler, Response } from 'express';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { AdmissionMiddleware } from '../auth/admission.middleware';
import { ApiKeyGuard } from '../auth/api-key.guard';
import type { GatewayRequest } from '../auth/gateway-request';
import { Clock } from '../clock';
import { PlanThrottlerGuard } from '../rate-limit/plan-throttler.guard';
import { API_PREFIX } from '../routing/api-routes';
import { apiCacheControl } from './cache-control.middleware';
import { FastRoute, fastPathRoutes, matchPlain } from './fast-path-routes';
import { PetsProxyController } from './pets-proxy.controller';
import { SunsetInterceptor, applySunset, sunsetPolicyOf } from './sunset.interceptor';

const noop = (): void => undefined;

/** What the fast path does in place of Nest's pipeline: the global guards through the admission, @Sunset itself. */
const APPLIED_GLOBAL_GUARDS: readonly Type[] = [ApiKeyGuard, PlanThrottlerGuard];
const APPLIED_INTERCEPTORS: readonly Type[] = [SunsetInterceptor];

/** What express's app.handle does to a request and its response: its prototypes, and the two cross-links. */
function asExpress(express: Express, request: GatewayRequest, response: Response): void {
  Object.setPrototypeOf(request, express.request);
  Object.setPrototypeOf(response, express.response);
  (request as unknown as { res: Response }).res = response;
  (response as unknown as { req: GatewayRequest }).req = request;
  response.locals ??= Object.create(null) as Response['locals'];
}

/**
 * The routes of PetsProxyController, served ahead of Express (its per-request prototype swap and router) and
 * Nest's guard/interceptor pipeline: the request takes the same steps in the same order as on the routed path
 * (request id, metrics, request log, security headers, the /v1 Cache-Control, admission with the global guards'
 * decisions, the deprecation headers of a @Sunset route, the controller's own handler, the one exception filter),
 * through the same services, built by Nest's DI (docs/benchmarks.md has what each part cost).
 *
 * The routes are read from the controller's metadata (fast-path-routes.ts): the fast path serves exactly the
 * routes it declares, by their own handlers, and refuses to start if the controller (or the app, globally)
 * carries an enhancer it does not apply. Only requests in the plain form take it (an exact template match, no
 * `Origin` header when CORS is on); everything else (a trailing slash, another case, percent-encoding, an
 * absolute-form target, OPTIONS, 404/405, a path two templates could take, CORS) goes through the router as
 * before, which stays the reference.
 */
@Injectable()
export class ProxyFastPath implements OnModuleInit {
  private readonly logger = new Logger('ProxyFastPath');
  private routes: FastRoute[] = [];
  private readonly sunsets = new Map<FastRoute, ReturnType<typeof sunsetPolicyOf>>();

  constructor(
    private readonly admission: AdmissionMiddleware,
    private readonly clock: Clock,
    private readonly reflector: Reflector,
    private readonly moduleRef: ModuleRef,
    private readonly appConfig: ApplicationConfig,
  ) {}

  onModuleInit(): void {
    this.serveController(PetsProxyController, this.moduleRef.get(PetsProxyController, { strict: false }));
  }

  /** Serves `controller`'s routes (the app's controller at start; a test gives another). */
  serveController(controller: Type, instance: object): void {
    this.routes = fastPathRoutes(controller, instance, API_PREFIX, APPLIED_INTERCEPTORS);
    this.sunsets.clear();
    for (const fast of this.routes) this.sunsets.set(fast, sunsetPolicyOf(this.reflector, fast.source.handler));
  }

  /** Puts the fast path in front of the app's request listener (Express), once the app is initialised. */
  install(server: Server, express: Express, pipeline: HttpAppPipeline): void {
    this.refuseUnappliedGlobals();
    const routed = server.listeners('request');
    if (routed.length !== 1) throw new Error(`Expected one request listener on the gateway's server, found ${routed.length}`);
    const fallback = routed[0] as (request: IncomingMessage, response: ServerResponse) => void;
    const handler = this.handler(express, pipeline, fallback);
    server.removeListener('request', fallback);
    server.on('request', handler);
  }

  /** The route a request is for, when it is in the plain form; undefined sends it through the router. */
  match(method: string | undefined, url: string | undefined): FastRoute | undefined {
    return matchPlain(this.routes, method, url)?.fast;
  }

  /** The app's global guards, interceptors and pipes: only those whose work the fast path does itself. */
  private refuseUnappliedGlobals(): void {
    const guards = [...this.appConfig.getGlobalGuards(), ...this.appConfig.getGlobalRequestGuards().map((wrapper) => wrapper.instance)];
    const unapplied = [
      ...guards.filter((guard) => !APPLIED_GLOBAL_GUARDS.some((type) => guard instanceof type)),
      ...this.appConfig.getGlobalInterceptors(),
      ...this.appConfig.getGlobalRequestInterceptors(),
      ...this.appConfig.getGlobalPipes(),
      ...this.appConfig.getGlobalRequestPipes(),
    ];
    if (unapplied.length > 0) {
      const names = unapplied.map((enhancer) => (enhancer as object).constructor.name).join(', ');
      throw new Error(`The proxy fast path does not apply the global ${names}: apply it in ProxyFastPath or remove the fast path.`);
    }
  }

  private handler(express: Express, pipeline: HttpAppPipeline, fallback: (request: IncomingMessage, response: ServerResponse) => void) {
    const everyRequest: readonly RequestHandler[] = pipeline.everyRequest;
    const filter: AllExceptionsFilter = pipeline.filter;
    const cors = pipeline.cors;
    // The whole answer, error or not, runs in the request's tracing context: for an unsampled trace, one without
    // its span (no child spans, no trace ids in its log lines), as the routed path's first middleware does.
    const answer = (fast: FastRoute, params: Record<string, string>, request: GatewayRequest, response: Response): void => {
      request.app = express;
      request.originalUrl = request.url;
      request.baseUrl = '';
      request.route = fast.route;
      for (let i = 0; i < everyRequest.length; i += 1) everyRequest[i](request, response, noop);
      apiCacheControl(request, response, noop);
      recordEdgeRoute(request.method, fast.route.path);

      this.serve(fast, params, request, response).catch((error: unknown) => {
        try {
          asExpress(express, request, response);
          filter.catch(error, new ExecutionContextHost([request, response, noop]));
        } catch (failure) {
          // Never an unhandled rejection (it would stop the process): the connection goes instead of an answer.
          this.logger.error(`Could not answer ${request.method} ${request.originalUrl.split('?')[0]}`, failure instanceof Error ? failure.stack : String(failure));
          response.destroy();
        }
      });
    };
    return (incoming: IncomingMessage, outgoing: ServerResponse): void => {
      const matched = matchPlain(this.routes, incoming.method, incoming.url);
      if (matched === undefined || (cors && incoming.headers.origin !== undefined)) return fallback(incoming, outgoing);
      // The request and response stay Node's own: what the steps read is set as own properties. Express's
      // app.handle swaps both objects' prototypes for its own on every request, which alone cost about a third
      // of the gateway's CPU per request (V8 deoptimises objects whose prototype changes); only an error, whose
      // filter writes through Express's response methods, gets them.
      runQuietlyWhenUnsampled(() => answer(matched.fast, matched.params, incoming as GatewayRequest, outgoing as unknown as Response));
    };
  }

  private async serve(fast: FastRoute, params: Record<string, string>, request: GatewayRequest, response: Response): Promise<void> {
    await this.admission.admit(request, response, fast.source);
    const sunset = this.sunsets.get(fast);
    if (sunset) applySunset(sunset, response, this.clock.now());
    await fast.invoke(request, response, params);
  }
}
