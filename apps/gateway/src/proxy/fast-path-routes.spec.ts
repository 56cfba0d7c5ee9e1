import { CallHandler, CanActivate, Controller, Get, Header, Injectable, NestInterceptor, Param, Req, Res, UseGuards, UseInterceptors } from '@nestjs/common';
import { Throttle } from '@nestjs/throttler';
import type { Response } from 'express';
import type { GatewayRequest } from '../auth/gateway-request';
import { API_PREFIX, PETS_PATH } from '../routing/api-routes';
import { fastPathRoutes, matchPlain } from './fast-path-routes';
import { PetsProxyController } from './pets-proxy.controller';
import { SunsetInterceptor } from './sunset.interceptor';

const APPLIED = [SunsetInterceptor];
const served: string[] = [];

/** A copy of the pets controller with one more route, declared after `:petId` (so Express would route it to getPet). */
@Controller(PETS_PATH)
class WithSearch extends PetsProxyController {
  @Get('search')
  search(@Req() _request: GatewayRequest, @Res() _response: Response): Promise<void> {
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

const upstream = { forward: async (_req: unknown, _res: unknown, path: string) => void served.push(`forward ${path}`) };
const pets = (type: typeof PetsProxyController) => new type(upstream as never);
const request = (url: string) => ({ url, originalUrl: url }) as GatewayRequest;

describe('the proxy fast path, derived from the controller', () => {
  beforeEach(() => (served.length = 0));

  it('serves exactly the routes the controller declares, each by its own handler', async () => {
    const routes = fastPathRoutes(PetsProxyController, pets(PetsProxyController), API_PREFIX, APPLIED);
    expect(routes.map((r) => `${r.source.method} ${r.route.path} ${r.source.methodName}`).sort()).toEqual([
      'GET /v1/pets listPets',
      'GET /v1/pets/:petId getPet',
      'POST /v1/pets createPet',
    ]);
    const matched = matchPlain(routes, 'GET', '/v1/pets/42?x=1');
    expect(matched?.fast.source.methodName).toBe('getPet');
    expect(matched?.params).toEqual({ petId: '42' });
    await matched!.fast.invoke(request('/v1/pets/42?x=1'), {} as Response, matched!.params);
    expect(served).toEqual(['forward /pets/42?x=1']);
  });

  it('never takes a static sub-route added beside :petId for getPet: a path two templates match goes to the router', async () => {
    const routes = fastPathRoutes(WithSearch, pets(WithSearch), API_PREFIX, APPLIED);
    expect(routes.map((r) => r.source.methodName)).toContain('search');
    expect(matchPlain(routes, 'GET', '/v1/pets/search')).toBeUndefined();
    // Without the copy's route, the same path is getPet's on the fast path (as it is on the router).
    const original = fastPathRoutes(PetsProxyController, pets(PetsProxyController), API_PREFIX, APPLIED);
    expect(matchPlain(original, 'GET', '/v1/pets/search')?.fast.source.methodName).toBe('getPet');
    expect(matchPlain(routes, 'GET', '/v1/pets/7')?.fast.source.methodName).toBe('getPet');
  });

  it('refuses to start when the controller or a route carries an enhancer the fast path does not apply', () => {
    @UseGuards(DenyAll)
    @Controller(PETS_PATH)
    class Guarded extends PetsProxyController {}
    expect(() => fastPathRoutes(Guarded, pets(Guarded), API_PREFIX, APPLIED)).toThrow(/Guarded: it carries a guard/);

    @Controller(PETS_PATH)
    class Intercepted extends PetsProxyController {
      @Get('stamped')
      @UseInterceptors(Stamp)
      stamped(@Res() _response: Response): void {}
    }
    expect(() => fastPathRoutes(Intercepted, pets(Intercepted), API_PREFIX, APPLIED)).toThrow(/Intercepted.stamped: it carries an interceptor/);

    @Controller(PETS_PATH)
    class Headed extends PetsProxyController {
      @Get('headed')
      @Header('X-Extra', '1')
      headed(@Res() _response: Response): void {}
    }
    expect(() => fastPathRoutes(Headed, pets(Headed), API_PREFIX, APPLIED)).toThrow(/@Header\(\)/);

    @Controller(PETS_PATH)
    class Returning extends PetsProxyController {
      @Get('value')
      value(@Param('x') _x: string): string {
        return 'for Nest to serialise';
      }
    }
    expect(() => fastPathRoutes(Returning, pets(Returning), API_PREFIX, APPLIED)).toThrow(/no @Res\(\)/);
  });

  it('accepts what it applies itself: @Sunset (its interceptor) and @Throttle (the admission runs the throttler guard)', () => {
    @Controller(PETS_PATH)
    class Throttled extends PetsProxyController {
      @Get('slow')
      @Throttle({ minute: { limit: 5 } })
      slow(@Res() _response: Response): void {}
    }
    expect(fastPathRoutes(Throttled, pets(Throttled), API_PREFIX, APPLIED).map((r) => r.source.methodName)).toContain('slow');
  });
});
