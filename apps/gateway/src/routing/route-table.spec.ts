import {
  CallHandler,
  CanActivate,
  Controller,
  Get,
  Header,
  Injectable,
  NestInterceptor,
  Post,
  Req,
  Res,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import type { Response } from 'express';
import { PetsProxyController } from '../proxy/pets-proxy.controller';
import { ApiExchange } from './api-exchange';
import { PETS_PATH } from './api-routes';
import { apiPathOf, RouteTable } from './route-table';

const served: string[] = [];

/** The pets controller with one more route, in a subclass: Nest's scanner lists (and registers) it before the inherited ones. */
@Controller(PETS_PATH)
class WithSearch extends PetsProxyController {
  @Get('search')
  search(@Req() _request: unknown, @Res() _response: Response): Promise<void> {
    served.push('search');
    return Promise.resolve();
  }
}

@Injectable()
class DenyAll implements CanActivate {
  canActivate(): boolean {
    return false;
  }
}

@Injectable()
class Stamp implements NestInterceptor {
  intercept(_context: unknown, next: CallHandler) {
    return next.handle();
  }
}

const upstream = {
  forward: async (exchange: ApiExchange, path: string) =>
    void served.push(`forward ${path} for ${exchange.consumer?.name}`),
};

function table(
  controller: typeof PetsProxyController | (new (...args: never[]) => object),
  instance?: object,
): RouteTable {
  const routes = new RouteTable({} as never);
  routes.serveOnly(controller as never, instance ?? new (controller as typeof PetsProxyController)(upstream as never));
  return routes;
}

describe("RouteTable: what a /v1 request is for, from the controllers' own routes", () => {
  beforeEach(() => (served.length = 0));

  it('holds exactly the routes the controller declares, each served by its own handler with the exchange', async () => {
    const routes = table(PetsProxyController);
    expect(routes.all.map((r) => `${r.method} ${r.path} ${r.methodName}`).sort()).toEqual([
      'GET /v1/pets listPets',
      'GET /v1/pets/:petId getPet',
      'POST /v1/pets createPet',
    ]);
    const matched = routes.match('GET', '/v1/pets/42');
    if (matched.kind !== 'route') throw new Error(`expected a route, got ${matched.kind}`);
    expect([matched.route.methodName, matched.params]).toEqual(['getPet', { petId: '42' }]);
    const request = { url: '/v1/pets/42?x=1', originalUrl: '/v1/pets/42?x=1' };
    const exchange = new ApiExchange(request as never, {} as never, '/v1/pets/42');
    exchange.consumer = { name: 'acme', plan: 'free', limits: { perMinute: 60, perDay: 1000 }, billingAnchorMs: 0 };
    await matched.route.invoke({ request, response: {}, url: request.url, params: matched.params, custom: exchange });
    expect(served).toEqual(['forward /pets/42?x=1 for acme']);
  });

  it('matches as Express would: any case, an optional trailing slash, HEAD by GET, percent-encoding decoded', () => {
    const routes = table(PetsProxyController);
    const kindOf = (method: string, path: string) => {
      const matched = routes.match(method, path);
      return matched.kind === 'route' ? `${matched.route.methodName} ${JSON.stringify(matched.params)}` : matched.kind;
    };
    expect(
      [
        ['GET', '/v1/pets'],
        ['GET', '/v1/pets/'],
        ['GET', '/V1/PETS'],
        ['HEAD', '/v1/pets'],
        ['POST', '/v1/pets/'],
        ['GET', '/v1/pets/%31'],
        ['GET', '/v1/pets/abc'],
        ['GET', '/v1/pets/%FF'],
        ['GET', '/v1/pets/1/2'],
        ['GET', '/v1/petsx'],
        ['GET', '/v1'],
        ['DELETE', '/v1/pets'],
        ['OPTIONS', '/v1/pets/1'],
        ['POST', '/v1/pets/1'],
      ].map(([method, path]) => `${method} ${path}: ${kindOf(method, path)}`),
    ).toEqual([
      'GET /v1/pets: listPets {}',
      'GET /v1/pets/: listPets {}',
      'GET /V1/PETS: listPets {}',
      'HEAD /v1/pets: listPets {}',
      'POST /v1/pets/: createPet {}',
      'GET /v1/pets/%31: getPet {"petId":"1"}',
      'GET /v1/pets/abc: getPet {"petId":"abc"}',
      'GET /v1/pets/%FF: undecodable',
      'GET /v1/pets/1/2: not-found',
      'GET /v1/petsx: not-found',
      'GET /v1: not-found',
      'DELETE /v1/pets: method-not-allowed',
      'OPTIONS /v1/pets/1: method-not-allowed',
      'POST /v1/pets/1: method-not-allowed',
    ]);
    expect(routes.match('DELETE', '/v1/pets')).toEqual({
      kind: 'method-not-allowed',
      template: '/v1/pets',
      allow: ['GET', 'HEAD', 'POST'],
    });
    expect(routes.match('PUT', '/v1/pets/7')).toEqual({
      kind: 'method-not-allowed',
      template: '/v1/pets/:petId',
      allow: ['GET', 'HEAD'],
    });
  });

  it('takes the first template in the order Nest registers routes where two match: `search` before the inherited `:petId`', () => {
    const routes = table(WithSearch);
    expect(routes.all.map((r) => r.methodName)).toEqual(['search', 'listPets', 'createPet', 'getPet']);
    const matched = routes.match('GET', '/v1/pets/search');
    expect(matched.kind === 'route' && matched.route.methodName).toBe('search');
    const other = routes.match('GET', '/v1/pets/7');
    expect(other.kind === 'route' && other.route.methodName).toBe('getPet');
  });

  it("refuses at start-up a route carrying what only Nest's router would apply", () => {
    @Controller(PETS_PATH)
    class Guarded {
      @Get()
      @UseGuards(DenyAll)
      list(@Res() _response: Response): void {}
    }
    @Controller(PETS_PATH)
    class Intercepted {
      @Get()
      @UseInterceptors(Stamp)
      list(@Res() _response: Response): void {}
    }
    @Controller(PETS_PATH)
    class WithHeader {
      @Post()
      @Header('x-a', 'b')
      create(@Res() _response: Response): void {}
    }
    @Controller(PETS_PATH)
    class Returning {
      @Get()
      list(): string {
        return 'nest would serialise this';
      }
    }
    for (const [controller, what] of [
      [Guarded, 'a guard'],
      [Intercepted, 'an interceptor'],
      [WithHeader, '@Header()'],
      [Returning, 'a return value'],
    ] as const) {
      expect(() => table(controller, new controller())).toThrow(what);
    }
  });
});

describe('apiPathOf: which request targets are under /v1', () => {
  it.each([
    ['/v1/pets?limit=1', '/v1/pets'],
    ['/v1', '/v1'],
    ['/V1/pets', '/V1/pets'],
    ['/v1?x', '/v1'],
    ['http://host:3000/v1/pets?limit=1', '/v1/pets'],
    ['/v10/pets', undefined],
    ['/v1pets', undefined],
    ['/health/live', undefined],
    ['/docs', undefined],
    ['*', undefined],
  ])('%s -> %s', (url, path) => {
    expect(apiPathOf(url)).toBe(path);
  });
});
