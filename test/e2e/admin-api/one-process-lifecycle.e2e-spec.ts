import { AuditLog } from '../../../apps/gateway/src/access/audit-log';
import { KeyCache } from '../../../apps/gateway/src/keys/key-cache';
import { UpstreamService } from '../../../apps/gateway/src/proxy/upstream.service';
import { RouteTable } from '../../../apps/gateway/src/routing/route-table';
import { UsageService } from '../../../apps/gateway/src/usage/usage.service';
import {
  adminCall,
  createGatewayTestDatabase,
  GatewayTestDatabase,
  GatewayUnderTest,
  startGateway,
} from '../../support/gateway';

/**
 * The hooks of the gateway's exported providers (the modules' own lifecycle classes are private to them): each must
 * run once per process, whichever app it is reached from.
 */
const HOOKED = [
  [AuditLog, ['onApplicationBootstrap', 'onApplicationShutdown']],
  [UsageService, ['onApplicationBootstrap', 'onApplicationShutdown']],
  [KeyCache, ['onModuleInit', 'onApplicationBootstrap', 'onModuleDestroy']],
  [RouteTable, ['onModuleInit']],
  [UpstreamService, ['onApplicationShutdown']],
] as const;
const STARTING = new Set(['onModuleInit', 'onApplicationBootstrap']);
const hooksOf = (starting: boolean) =>
  HOOKED.flatMap(([type, hooks]) =>
    hooks.filter((hook) => STARTING.has(hook) === starting).map((hook) => `${type.name}.${hook}`),
  );

const RETENTION_EVERY_MS = 60 * 60 * 1000;

/**
 * One composition root (issue #35, point 2): the gateway app owns every provider and runs every lifecycle hook;
 * the admin app, on its own port, serves the same instances without running their hooks a second time (which
 * started a second audit retention timer and stopped the gateway's timers when the admin port closed).
 */
describe('the gateway and its admin API in one process', () => {
  let database: GatewayTestDatabase;
  let gateway: GatewayUnderTest | undefined;
  const calls = new Map<string, jest.SpyInstance>();
  let intervals: jest.SpyInstance;

  beforeAll(async () => {
    for (const [type, hooks] of HOOKED) {
      for (const hook of hooks) calls.set(`${type.name}.${hook}`, jest.spyOn(type.prototype as never, hook as never));
    }
    intervals = jest.spyOn(global, 'setInterval');
    database = await createGatewayTestDatabase();
    gateway = await startGateway({ petsUrl: 'http://127.0.0.1:1', database });
  });

  afterAll(async () => {
    await gateway?.close();
    await database?.drop();
    jest.restoreAllMocks();
  });

  const count = (name: string) => calls.get(name)!.mock.calls.length;

  it('runs each start-up hook once, and starts one retention timer per job', async () => {
    for (const name of hooksOf(true)) expect([name, count(name)]).toEqual([name, 1]);
    // The audit log's and the usage history's hourly retention: one each.
    expect(intervals.mock.calls.filter(([, ms]) => ms === RETENTION_EVERY_MS)).toHaveLength(2);
    // The admin API works with the gateway's instances.
    expect((await adminCall(gateway!, 'GET', '/audit')).status).toBe(200);
  });

  it("leaves the gateway's hooks to the gateway when the admin port closes, and runs each shutdown hook once", async () => {
    await gateway!.admin.close();
    for (const name of hooksOf(false)) expect([name, count(name)]).toEqual([name, 0]);
    await gateway!.app.close();
    for (const name of hooksOf(false)) expect([name, count(name)]).toEqual([name, 1]);
    gateway = undefined;
  });
});
