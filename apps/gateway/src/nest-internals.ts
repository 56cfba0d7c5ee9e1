/**
 * The one adapter between the gateway and Nest's (and @nestjs/throttler's) internals: metadata keys, the
 * execution context class and the argument kinds their public API does not export. Nothing else in the gateway
 * imports `@nestjs/<package>/<internal path>` (npm run lint:architecture enforces it), so a framework upgrade
 * that moves one of them breaks here, at start-up, and nowhere else.
 */
import { ExecutionContext, RequestMethod, Type } from '@nestjs/common';
import {
  CUSTOM_ROUTE_ARGS_METADATA,
  EXCEPTION_FILTERS_METADATA,
  GUARDS_METADATA,
  HEADERS_METADATA,
  HTTP_CODE_METADATA,
  INTERCEPTORS_METADATA,
  METHOD_METADATA,
  PATH_METADATA,
  PIPES_METADATA,
  REDIRECT_METADATA,
  ROUTE_ARGS_METADATA,
} from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/internal';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { parse as parseQuery } from 'node:querystring';

/** Where `@SkipThrottle()` without arguments puts its flag (the package's THROTTLER_SKIP + 'default', not exported). */
export const THROTTLER_SKIP_DEFAULT = 'THROTTLER:SKIPdefault';
/** The prefix of every metadata key @Throttle and @SkipThrottle write. */
export const THROTTLER_METADATA_PREFIX = 'THROTTLER:';

/** Where @nestjs/swagger's @ApiOperation puts its options (the package's DECORATORS.API_OPERATION). */
const SWAGGER_API_OPERATION = 'swagger/apiOperation';

/** The operationId a route handler declares with @ApiOperation, if any. */
export function operationIdOf(handler: object): string | undefined {
  const options = Reflect.getMetadata(SWAGGER_API_OPERATION, handler) as { operationId?: string } | undefined;
  return options?.operationId;
}

/** An ExecutionContext over `args` (request, response, ...) for `handler` of `controller`, as Nest's router builds one. */
export function executionContext(
  args: unknown[],
  controller?: Type,
  handler?: (...args: never[]) => unknown,
): ExecutionContext {
  return new ExecutionContextHost(args, controller, handler as never);
}

/** The paths and verb a controller method declares (@Get, @Post...), or undefined for a method that is no route. */
export function routeDeclaration(handler: object): { paths: string[]; method: string } | undefined {
  const paths = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
  const verb = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
  return paths === undefined || verb === undefined ? undefined : { paths: [paths].flat(), method: RequestMethod[verb] };
}

/** The paths a controller class declares (@Controller('pets')). */
export function controllerPaths(controller: Type): string[] {
  return [(Reflect.getMetadata(PATH_METADATA, controller) as string | string[] | undefined) ?? ''].flat();
}

/** What a handler argument is built from, per request. */
export interface ArgumentSources {
  request: unknown;
  response: unknown;
  /** The raw request target (path and query). */
  url: string;
  params: Record<string, string>;
  /** What a custom parameter decorator the caller knows resolves to. */
  custom: unknown;
}

type ArgumentOf = (sources: ArgumentSources) => unknown;

const ARGUMENTS: Partial<Record<RouteParamtypes, (data: string | undefined) => ArgumentOf>> = {
  [RouteParamtypes.REQUEST]: () => (s) => s.request,
  [RouteParamtypes.RESPONSE]: () => (s) => s.response,
  [RouteParamtypes.PARAM]: (data) => (s) => (data === undefined ? s.params : s.params[data]),
  [RouteParamtypes.QUERY]: (data) => (s) => {
    // Express 5's default ("simple") query parser is node:querystring.
    const at = s.url.indexOf('?');
    const query = parseQuery(at < 0 ? '' : s.url.slice(at + 1));
    return data === undefined ? query : query[data];
  },
};

/**
 * A handler of `controller` as a plain function of its request's sources, with the arguments its decorators
 * declare (@Req, @Res, @Param, @Query, and the one custom decorator whose factory is `customFactory`). It
 * refuses (throws, at start-up) what only Nest's router would apply: guards, pipes, exception filters,
 * interceptors, @Header/@HttpCode/@Redirect, a handler that does not write its own answer, any other argument.
 */
export function handlerInvoker(
  controller: Type,
  methodName: string,
  instance: object,
  customFactory: unknown,
): (sources: ArgumentSources) => Promise<unknown> {
  const where = `${controller.name}.${methodName}`;
  const handler = (controller.prototype as Record<string, (...args: unknown[]) => Promise<unknown>>)[methodName];
  const refuse = (what: string): never => {
    throw new Error(
      `The /v1 pipeline cannot serve ${where}: it carries ${what}, which only Nest's router applies. Do it in the pipeline (apps/gateway/src/pipeline) instead.`,
    );
  };
  for (const target of [controller, handler]) {
    for (const [key, what] of [
      [GUARDS_METADATA, 'a guard'],
      [PIPES_METADATA, 'a pipe'],
      [EXCEPTION_FILTERS_METADATA, 'an exception filter'],
      [INTERCEPTORS_METADATA, 'an interceptor'],
    ] as const) {
      if ((Reflect.getMetadata(key, target) as unknown[] | undefined)?.length) refuse(what);
    }
  }
  for (const [key, what] of [
    [HEADERS_METADATA, '@Header()'],
    [HTTP_CODE_METADATA, '@HttpCode()'],
    [REDIRECT_METADATA, '@Redirect()'],
  ] as const) {
    if (Reflect.getMetadata(key, handler) !== undefined) refuse(what);
  }
  const declared = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, methodName) ?? {}) as Record<
    string,
    { index: number; data?: string; pipes?: unknown[]; factory?: unknown }
  >;
  const argumentsOf: ArgumentOf[] = [];
  let answers = false;
  for (const [key, { index, data, pipes, factory }] of Object.entries(declared)) {
    if (pipes?.length) refuse('a parameter pipe');
    if (key.includes(CUSTOM_ROUTE_ARGS_METADATA)) {
      if (factory !== customFactory) refuse('a custom parameter decorator');
      argumentsOf[index] = (s) => s.custom;
      answers = true;
      continue;
    }
    const type = Number(key.split(':')[0]) as RouteParamtypes;
    const build = ARGUMENTS[type];
    if (build === undefined) return refuse(`a parameter of kind ${RouteParamtypes[type] ?? key}`);
    if (type === RouteParamtypes.RESPONSE) answers = true;
    argumentsOf[index] = build(data);
  }
  if (!answers) refuse('a return value for Nest to serialise (neither @Res() nor the exchange)');
  return (sources) =>
    handler.apply(
      instance,
      argumentsOf.map((argument) => argument?.(sources)),
    );
}
