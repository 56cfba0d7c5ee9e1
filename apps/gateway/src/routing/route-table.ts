import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { API_PREFIX, UNPREFIXED_PATHS } from './api-routes';
import { answersMethod, ControllerRoute, controllerRoutes } from './controller-routes';

/** A request under /v1 that no route takes (a 404 or 405): no route's own metadata applies to it. */
export class UnroutedRequest {
  unrouted(): void {}
}

/**
 * Every /v1 route of the app, from its controllers' metadata, in the order Nest registers them: tells the
 * admission, before Express's router runs, which route a request will reach (same matching rules: the raw path,
 * case-insensitive, an optional trailing slash, HEAD by GET), so that the route's guards metadata
 * (@SkipThrottle, @Throttle) apply to it.
 */
@Injectable()
export class RouteTable implements OnModuleInit {
  private routes: ControllerRoute[] = [];

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    this.routes = this.discovery
      .getControllers()
      .flatMap((wrapper) => (wrapper.metatype ? controllerRoutes(wrapper.metatype as never, API_PREFIX) : []))
      .filter((route) => !UNPREFIXED_PATHS.some((path) => route.path === `${API_PREFIX}/${path}`));
  }

  /** The route Express will take for this request, or undefined (404, 405). */
  resolve(method: string | undefined, url: string | undefined): ControllerRoute | undefined {
    const path = pathOf(url);
    if (path === undefined) return undefined;
    return this.routes.find((route) => answersMethod(route, method) && route.matchRouted(path) !== false);
  }
}

/** The path of a request target: origin-form up to the query, or an absolute-form URL's path. */
function pathOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  if (url.startsWith('/')) {
    const query = url.indexOf('?');
    return query < 0 ? url : url.slice(0, query);
  }
  return URL.canParse(url) ? new URL(url).pathname : undefined;
}
