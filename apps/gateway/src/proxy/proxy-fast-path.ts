import { AllExceptionsFilter } from '@app/errors';
import { HttpAppPipeline } from '@app/platform';
import { recordEdgeRoute } from '@app/platform/tracing/edge-outcome';
import { Injectable, Logger } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import type { Express, RequestHandler, Response } from 'express';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { AdmissionMiddleware } from '../auth/admission.middleware';
import { Clock } from '../clock';
import type { GatewayRequest } from '../request/gateway-request';
import { API_PREFIX, PETS_PATH, PetsProxyController } from './pets-proxy.controller';
import { SunsetPolicy, applySunset, sunsetPolicyOf } from './sunset.interceptor';
import { UpstreamService } from './upstream.service';

/** One of the three public operations, as Express would have matched it (its template labels metrics and traces). */
interface FastRoute {
  readonly route: { readonly path: string };
  readonly sunset?: SunsetPolicy;
}

const COLLECTION = `${API_PREFIX}/${PETS_PATH}`;
/** A path segment of unreserved and sub-delimiter characters only: no percent-encoding to decode, no dot segment. */
const PLAIN_SEGMENT = /^(?!\.\.?$)[A-Za-z0-9\-._~!$&'()*+,;=:@]+$/;
const noop = (): void => undefined;

/** What express's app.handle does to a request and its response: its prototypes, and the two cross-links. */
function asExpress(express: Express, request: GatewayRequest, response: Response): void {
  Object.setPrototypeOf(request, express.request);
  Object.setPrototypeOf(response, express.response);
  (request as unknown as { res: Response }).res = response;
  (response as unknown as { req: GatewayRequest }).req = request;
  response.locals ??= Object.create(null) as Response['locals'];
}

/**
 * The three `/v1` operations, served ahead of Express (its per-request prototype swap and router) and Nest's
 * guard/interceptor pipeline, which decide nothing here: the request takes the same steps in the same order as on
 * the routed path (request id, metrics, request log, security headers, admission, the deprecation headers of
 * getPet, forwarding, the one exception filter), through the same services, built by Nest's DI
 * (docs/benchmarks.md has what each part cost).
 *
 * Only requests in the plain form take it: exactly `/v1/pets` or `/v1/pets/{segment}` with a plain segment, the
 * methods the controller declares (HEAD with GET, as Express does), and no `Origin` header when CORS is on.
 * Everything else (a trailing slash, another case, percent-encoding, an absolute-form target, OPTIONS, 404/405,
 * CORS) goes through the router as before, which stays the reference: the controller is still where the
 * operations are declared and documented.
 */
@Injectable()
export class ProxyFastPath {
  private readonly logger = new Logger('ProxyFastPath');
  /** listPets and createPet (one template, told apart by the method). */
  private readonly collection: FastRoute = { route: { path: COLLECTION } };
  private readonly getOne: FastRoute;

  constructor(
    private readonly admission: AdmissionMiddleware,
    private readonly upstream: UpstreamService,
    private readonly clock: Clock,
    reflector: Reflector,
  ) {
    const sunset = sunsetPolicyOf(reflector, PetsProxyController.prototype.getPet);
    this.getOne = { route: { path: `${COLLECTION}/:petId` }, sunset };
  }

  /** Puts the fast path in front of the app's request listener (Express), once the app is initialised. */
  install(server: Server, express: Express, pipeline: HttpAppPipeline): void {
    const routed = server.listeners('request');
    if (routed.length !== 1) throw new Error(`Expected one request listener on the gateway's server, found ${routed.length}`);
    const fallback = routed[0] as (request: IncomingMessage, response: ServerResponse) => void;
    const handler = this.handler(express, pipeline, fallback);
    server.removeListener('request', fallback);
    server.on('request', handler);
  }

  /** The operation a request is for, when it is in the plain form; undefined sends it through the router. */
  match(method: string | undefined, url: string | undefined): FastRoute | undefined {
    if (url === undefined || !url.startsWith(COLLECTION)) return undefined;
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    const reading = method === 'GET' || method === 'HEAD';
    if (path.length === COLLECTION.length) return reading || method === 'POST' ? this.collection : undefined;
    if (!reading || path.charCodeAt(COLLECTION.length) !== 0x2f) return undefined;
    return PLAIN_SEGMENT.test(path.slice(COLLECTION.length + 1)) ? this.getOne : undefined;
  }

  private handler(express: Express, pipeline: HttpAppPipeline, fallback: (request: IncomingMessage, response: ServerResponse) => void) {
    const everyRequest: readonly RequestHandler[] = pipeline.everyRequest;
    const filter: AllExceptionsFilter = pipeline.filter;
    const cors = pipeline.cors;
    return (incoming: IncomingMessage, outgoing: ServerResponse): void => {
      const fast = this.match(incoming.method, incoming.url);
      if (fast === undefined || (cors && incoming.headers.origin !== undefined)) return fallback(incoming, outgoing);

      // The request and response stay Node's own: what the steps read is set as own properties. Express's
      // app.handle swaps both objects' prototypes for its own on every request, which alone cost about a third
      // of the gateway's CPU per request (V8 deoptimises objects whose prototype changes); only an error, whose
      // filter writes through Express's response methods, gets them.
      const request = incoming as GatewayRequest;
      const response = outgoing as unknown as Response;
      request.app = express;
      request.originalUrl = request.url;
      request.baseUrl = '';
      request.route = fast.route;
      for (let i = 0; i < everyRequest.length; i += 1) everyRequest[i](request, response, noop);
      recordEdgeRoute(request.method, fast.route.path);

      this.serve(fast, request, response).catch((error: unknown) => {
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
  }

  private async serve(fast: FastRoute, request: GatewayRequest, response: Response): Promise<void> {
    await this.admission.admit(request, response);
    if (fast.sunset) applySunset(fast.sunset, response, this.clock.now());
    await this.upstream.forward(request, response, request.url.slice(API_PREFIX.length));
  }
}
