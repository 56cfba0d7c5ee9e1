import { Type } from '@nestjs/common';
import { RouteParamtypes } from '@nestjs/common/internal';
import {
  CUSTOM_ROUTE_ARGS_METADATA,
  EXCEPTION_FILTERS_METADATA,
  GUARDS_METADATA,
  HEADERS_METADATA,
  HTTP_CODE_METADATA,
  INTERCEPTORS_METADATA,
  PIPES_METADATA,
  REDIRECT_METADATA,
  ROUTE_ARGS_METADATA,
} from '@nestjs/common/constants';
import { parse as parseQuery } from 'node:querystring';
import type { Response } from 'express';
import type { GatewayRequest } from '../auth/gateway-request';
import { answersMethod, ControllerRoute, controllerRoutes } from '../routing/controller-routes';

/** A route the fast path serves: the controller's own handler, called with the arguments its decorators ask for. */
export interface FastRoute {
  readonly source: ControllerRoute;
  /** What Express would set as `request.route` (its template labels metrics and traces). */
  readonly route: { readonly path: string };
  invoke(request: GatewayRequest, response: Response, params: Record<string, string>): Promise<unknown>;
}

/** A path segment of unreserved and sub-delimiter characters only: no percent-encoding to decode, no dot segment. */
const PLAIN_SEGMENT = /^(?!\.\.?$)[A-Za-z0-9\-._~!$&'()*+,;=:@]+$/;

type ArgumentOf = (request: GatewayRequest, response: Response, params: Record<string, string>) => unknown;

/** How the fast path builds each handler argument Nest would pass; any other kind of argument is refused. */
const ARGUMENTS: Partial<Record<RouteParamtypes, (data: string | undefined) => ArgumentOf>> = {
  [RouteParamtypes.REQUEST]: () => (request) => request,
  [RouteParamtypes.RESPONSE]: () => (_request, response) => response,
  [RouteParamtypes.PARAM]: (data) => (_request, _response, params) => (data === undefined ? params : params[data]),
  [RouteParamtypes.QUERY]: (data) => (request) => {
    // Express 5's default ("simple") query parser is node:querystring.
    const url = request.url ?? '';
    const at = url.indexOf('?');
    const query = parseQuery(at < 0 ? '' : url.slice(at + 1));
    return data === undefined ? query : query[data];
  },
};

/**
 * The routes of `controller` the fast path may serve, derived from Nest's metadata, so that it serves exactly the
 * routes the controller declares, each by its own handler. It refuses (throws, at start-up) a controller or route
 * that carries what only Nest's pipeline would apply: guards, pipes, exception filters, interceptors other than
 * those in `appliedInterceptors` (which the fast path applies itself), @Header/@HttpCode/@Redirect, a handler
 * that does not write its answer through @Res(), or an argument other than @Req/@Res/@Param/@Query.
 * Global guards run through the admission (see ProxyFastPath); @Throttle/@SkipThrottle apply as on the router.
 */
export function fastPathRoutes(controller: Type, instance: object, prefix: string, appliedInterceptors: readonly Type[]): FastRoute[] {
  const refuse = (where: string, what: string) => {
    throw new Error(`The proxy fast path cannot serve ${where}: it carries ${what}, which only Nest's router applies. Apply it in ProxyFastPath or serve the route through the router.`);
  };
  const checkEnhancers = (target: object, where: string) => {
    for (const [key, what] of [[GUARDS_METADATA, 'a guard'], [PIPES_METADATA, 'a pipe'], [EXCEPTION_FILTERS_METADATA, 'an exception filter']] as const) {
      if ((Reflect.getMetadata(key, target) as unknown[] | undefined)?.length) refuse(where, what);
    }
    const interceptors = (Reflect.getMetadata(INTERCEPTORS_METADATA, target) as unknown[] | undefined) ?? [];
    if (interceptors.some((interceptor) => !appliedInterceptors.includes(interceptor as Type))) refuse(where, 'an interceptor');
  };
  checkEnhancers(controller, controller.name);

  return controllerRoutes(controller, prefix).map((source) => {
    const where = `${controller.name}.${source.methodName}`;
    checkEnhancers(source.handler, where);
    for (const [key, what] of [[HEADERS_METADATA, '@Header()'], [HTTP_CODE_METADATA, '@HttpCode()'], [REDIRECT_METADATA, '@Redirect()']] as const) {
      if (Reflect.getMetadata(key, source.handler) !== undefined) refuse(where, what);
    }
    const declared = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, source.methodName) ?? {}) as Record<string, { index: number; data?: string; pipes?: unknown[] }>;
    if (Reflect.getMetadata(CUSTOM_ROUTE_ARGS_METADATA, controller, source.methodName) !== undefined) refuse(where, 'a custom parameter decorator');
    const argumentsOf: ArgumentOf[] = [];
    let writesResponse = false;
    for (const [key, { index, data, pipes }] of Object.entries(declared)) {
      const type = Number(key.split(':')[0]) as RouteParamtypes;
      const build = ARGUMENTS[type];
      if (build === undefined || key.includes('CUSTOM')) refuse(where, `a parameter of kind ${RouteParamtypes[type] ?? key}`);
      if (pipes?.length) refuse(where, 'a parameter pipe');
      if (type === RouteParamtypes.RESPONSE) writesResponse = true;
      argumentsOf[index] = build!(data);
    }
    if (!writesResponse) refuse(where, 'a return value for Nest to serialise (no @Res())');
    const handler = source.handler as unknown as (...args: unknown[]) => Promise<unknown>;
    return {
      source,
      route: { path: source.path },
      invoke: (request, response, params) => handler.apply(instance, argumentsOf.map((argument) => argument?.(request, response, params))),
    };
  });
}

/**
 * The route for a request in its plain form, or undefined (the router takes it): the path exactly a template's
 * (same case, no trailing slash, no percent-encoding or dot segment in a parameter), a method the route answers,
 * and no other template matching the path: where two could (a `search` route beside `:petId`), Express's order
 * decides, so the router does.
 */
export function matchPlain(routes: readonly FastRoute[], method: string | undefined, url: string | undefined): { fast: FastRoute; params: Record<string, string> } | undefined {
  if (url === undefined || url.charCodeAt(0) !== 0x2f) return undefined;
  const query = url.indexOf('?');
  const segments = (query < 0 ? url : url.slice(0, query)).split('/');
  let found: { fast: FastRoute; params: Record<string, string> } | undefined;
  let template: string | undefined;
  for (const fast of routes) {
    const params = matchSegments(fast.source, segments);
    if (params === undefined) continue;
    // One template may hold several methods (listPets and createPet); two templates make it ambiguous.
    if (template !== undefined && template !== fast.source.path) return undefined;
    template = fast.source.path;
    if (found === undefined && answersMethod(fast.source, method)) found = { fast, params };
  }
  return found;
}

function matchSegments(route: ControllerRoute, segments: string[]): Record<string, string> | undefined {
  if (segments.length !== route.segments.length + 1) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < route.segments.length; i += 1) {
    const template = route.segments[i];
    const segment = segments[i + 1];
    if ('literal' in template) {
      if (segment !== template.literal) return undefined;
    } else {
      if (!PLAIN_SEGMENT.test(segment)) return undefined;
      params[template.param] = segment;
    }
  }
  return params;
}
