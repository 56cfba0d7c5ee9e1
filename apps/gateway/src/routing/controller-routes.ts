import { Type } from '@nestjs/common';
import { MetadataScanner } from '@nestjs/core';
import { match, MatchFunction } from 'path-to-regexp';
import { controllerPaths, routeDeclaration } from '../nest-internals';

/** One route a controller declares, read from Nest's own metadata (the same that Nest's router registers). */
export interface ControllerRoute {
  readonly controller: Type;
  /** The handler function on the controller's prototype (what an ExecutionContext's getHandler() returns). */
  readonly handler: (...args: never[]) => unknown;
  readonly methodName: string;
  /** GET, POST...; ALL for @All(). */
  readonly method: string;
  /** The full template, as Express registers it: `/v1/pets/:petId`. */
  readonly path: string;
  /** Matches a raw (not decoded) path as Express's router does: case-insensitive, an optional trailing slash. */
  readonly match: MatchFunction<Record<string, string>>;
}

const joinPaths = (...parts: string[]) =>
  `/${parts
    .flatMap((p) => p.split('/'))
    .filter(Boolean)
    .join('/')}`;

/** Every route `controller` declares, in declaration order (the order Nest registers them in), under `prefix`. */
export function controllerRoutes(controller: Type, prefix: string): ControllerRoute[] {
  const routes: ControllerRoute[] = [];
  // The methods Nest's own explorer finds (inherited ones included), in its order.
  for (const methodName of new MetadataScanner().getAllMethodNames(controller.prototype)) {
    const handler = (controller.prototype as Record<string, unknown>)[methodName];
    if (typeof handler !== 'function') continue;
    const declared = routeDeclaration(handler);
    if (declared === undefined) continue;
    for (const own of declared.paths) {
      for (const head of controllerPaths(controller)) {
        const path = joinPaths(prefix, head, own);
        routes.push({
          controller,
          handler: handler as ControllerRoute['handler'],
          methodName,
          method: declared.method,
          path,
          match: match(path, { sensitive: false, trailing: true, end: true, decode: false }),
        });
      }
    }
  }
  return routes;
}

/** Whether `route` answers `method` as Express does: HEAD is served by a GET route, ALL answers everything. */
export function answersMethod(route: Pick<ControllerRoute, 'method'>, method: string | undefined): boolean {
  return route.method === method || route.method === 'ALL' || (method === 'HEAD' && route.method === 'GET');
}
