import { Injectable, OnModuleInit, Type } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { ArgumentSources, handlerInvoker, operationIdOf } from '../nest-internals';
import { API_PREFIX, UNPREFIXED_PATHS } from './api-routes';
import { resolveExchange } from './api-exchange';
import { answersMethod, ControllerRoute, controllerRoutes } from './controller-routes';

/** A /v1 route: the controller's declaration, and its handler as the pipeline calls it. */
export interface ApiRoute extends ControllerRoute {
  /** The operation a request of this route is counted under (usage history): its operationId, read once. */
  readonly operation: string;
  invoke(sources: ArgumentSources): Promise<unknown>;
}

/** What a request under /v1 is for, decided once, before anything else looks at it. */
export type RouteMatch =
  | { kind: 'route'; route: ApiRoute; params: Record<string, string> }
  /** The path is a route's, the method none of its (405): `allow` lists those it has. */
  | { kind: 'method-not-allowed'; template: string; allow: string[] }
  /** The path is a route's, but a parameter is not valid percent-encoding (400, as Express's router answers it). */
  | { kind: 'undecodable'; template: string; segment: string }
  | { kind: 'not-found' };

/** A route's operationId, or (a route the OpenAPI document does not name) its method and template. */
function operationOf(route: ControllerRoute): string {
  return operationIdOf(route.handler) ?? `${route.method} ${route.path}`;
}

/** A request under /v1 that no route takes (a 404 or 405): no route's own metadata applies to it. */
export class UnroutedRequest {
  unrouted(): void {}
}
export const UNROUTED = { controller: UnroutedRequest as Type, handler: UnroutedRequest.prototype.unrouted };

/**
 * Every /v1 route of the app, read from its controllers' metadata in the order Nest registers them (the
 * controllers stay the source of the routes and of their OpenAPI description), matched as Express's router
 * would: the raw path, case-insensitive, an optional trailing slash, HEAD by GET, the first template in
 * declaration order. The pipeline serves every /v1 request from it; Express's router never sees one.
 */
@Injectable()
export class RouteTable implements OnModuleInit {
  private routes: ApiRoute[] = [];

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    this.routes = this.discovery.getControllers().flatMap((wrapper) => {
      const controller = wrapper.metatype as Type | undefined;
      if (!controller || !wrapper.instance) return [];
      return controllerRoutes(controller, API_PREFIX)
        .filter((route) => !UNPREFIXED_PATHS.some((path) => route.path === `${API_PREFIX}/${path}`))
        .map((route) => ({
          ...route,
          operation: operationOf(route),
          invoke: handlerInvoker(controller, route.methodName, wrapper.instance as object, resolveExchange),
        }));
    });
  }

  /** Serves `controller`'s routes alone (a test's controller in place of the app's). */
  serveOnly(controller: Type, instance: object): void {
    this.routes = controllerRoutes(controller, API_PREFIX).map((route) => ({
      ...route,
      operation: operationOf(route),
      invoke: handlerInvoker(controller, route.methodName, instance, resolveExchange),
    }));
  }

  get all(): readonly ApiRoute[] {
    return this.routes;
  }

  /** The route for `method` on `path` (a raw path under /v1, without its query). */
  match(method: string | undefined, path: string): RouteMatch {
    let template: string | undefined;
    const allow = new Set<string>();
    for (const route of this.routes) {
      const matched = route.match(path);
      if (matched === false) continue;
      if (answersMethod(route, method)) {
        const params: Record<string, string> = {};
        for (const [name, raw] of Object.entries(matched.params)) {
          const value = decodeSegment(raw);
          if (value === undefined) return { kind: 'undecodable', template: route.path, segment: raw };
          params[name] = value;
        }
        return { kind: 'route', route, params };
      }
      template ??= route.path;
      if (route.method === 'ALL') continue;
      allow.add(route.method);
      if (route.method === 'GET') allow.add('HEAD');
    }
    return template === undefined
      ? { kind: 'not-found' }
      : { kind: 'method-not-allowed', template, allow: [...allow].sort() };
  }
}

/** A path parameter decoded as Express decodes it, or undefined when it is not valid percent-encoding. */
function decodeSegment(raw: string): string | undefined {
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/**
 * The path of a request target under /v1 (origin form up to the query, or an absolute-form URL's path), or
 * undefined for a target outside /v1: `/v1` itself and anything below `/v1/`, in any case, as Express mounts it.
 */
export function apiPathOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  let path: string;
  if (url.charCodeAt(0) === 0x2f) {
    const query = url.indexOf('?');
    path = query < 0 ? url : url.slice(0, query);
  } else {
    if (!URL.canParse(url)) return undefined;
    path = new URL(url).pathname;
  }
  const prefix = API_PREFIX.length;
  if (path.length < prefix || path.slice(0, prefix).toLowerCase() !== API_PREFIX) return undefined;
  return path.length === prefix || path.charCodeAt(prefix) === 0x2f ? path : undefined;
}
