import { createServer, IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  decideSamplingFirst,
  firstSamplingOf,
  propagateUnsampled,
  sampleFirst,
  unsampledLogFields,
  unsampledTraceparent,
} from './sampling-first';

const SAMPLED_PARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const UNSAMPLED_PARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';
const UNSAMPLED = /^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/;

describe('firstSamplingOf (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG)', () => {
  it("reads the standard samplers, parent-based by default as the SDK's", () => {
    expect(firstSamplingOf({})).toEqual({ ratio: 1, followParent: true });
    expect(firstSamplingOf({ OTEL_TRACES_SAMPLER: 'always_off' })).toEqual({ ratio: 0, followParent: false });
    expect(
      firstSamplingOf({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }),
    ).toEqual({ ratio: 0.1, followParent: true });
    expect(firstSamplingOf({ OTEL_TRACES_SAMPLER: 'traceidratio' })).toEqual({ ratio: 1, followParent: false });
  });

  it('leaves a sampler it does not know to the SDK, and refuses a ratio that is no share', () => {
    expect(firstSamplingOf({ OTEL_TRACES_SAMPLER: 'parentbased_jaeger_remote' })).toBeUndefined();
    expect(() => firstSamplingOf({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' })).toThrow(
      'OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1 (got "1.5")',
    );
  });
});

describe('unsampledTraceparent', () => {
  const tenth = { ratio: 0.1, followParent: true };

  it('samples a new trace by the ratio, and gives an unsampled one a traceparent with flags 00', () => {
    expect(unsampledTraceparent(tenth, false, undefined, () => 0.05)).toBeUndefined();
    expect(unsampledTraceparent(tenth, false, undefined, () => 0.5)).toMatch(UNSAMPLED);
  });

  it("follows a trusted parent's flag (same trace id), whatever the ratio", () => {
    expect(unsampledTraceparent(tenth, true, SAMPLED_PARENT, () => 0.99)).toBeUndefined();
    const propagated = unsampledTraceparent({ ratio: 1, followParent: true }, true, UNSAMPLED_PARENT);
    expect(propagated).toMatch(UNSAMPLED);
    expect(propagated!.slice(3, 35)).toBe('0af7651916cd43dd8448eb211c80319c');
  });

  it('ignores the parent when it is not trusted, malformed, or the sampler is not parent-based', () => {
    expect(unsampledTraceparent(tenth, false, SAMPLED_PARENT, () => 0.5)).toMatch(UNSAMPLED);
    expect(unsampledTraceparent(tenth, true, 'garbage', () => 0.5)).toMatch(UNSAMPLED);
    expect(unsampledTraceparent(tenth, true, `00-${'0'.repeat(32)}-b7ad6b7169203331-01`, () => 0.5)).toMatch(UNSAMPLED);
    expect(unsampledTraceparent({ ratio: 0.1, followParent: false }, true, SAMPLED_PARENT, () => 0.5)).toMatch(
      UNSAMPLED,
    );
  });
});

describe('sampleFirst', () => {
  let server: Server;
  const seen: Array<{ instrumented: boolean; request: IncomingMessage }> = [];
  const realEmit = Server.prototype.emit;

  beforeAll(async () => {
    // Stands for the HTTP instrumentation's wrapper of Server.prototype.emit: it marks what it sees.
    Server.prototype.emit = function (this: Server, event: string | symbol, ...args: unknown[]) {
      if (event === 'request') (args[0] as IncomingMessage & { instrumented?: boolean }).instrumented = true;
      return realEmit.apply(this, [event, ...args] as Parameters<typeof realEmit>);
    } as typeof realEmit;
    decideSamplingFirst({ ratio: 0, followParent: true }, true, /^\/health\//);
    server = createServer((request, response) => {
      const instrumented = (request as IncomingMessage & { instrumented?: boolean }).instrumented === true;
      seen.push({ instrumented, request });
      response.end();
    });
    sampleFirst(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    Server.prototype.emit = realEmit;
    await new Promise((resolve) => server.close(resolve));
  });

  const get = (headers: Record<string, string> = {}, path = '/') =>
    fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`, { headers }).then((r) =>
      r.arrayBuffer(),
    );

  it('hands an unsampled request to the app past the instrumentation, and remembers its decision', async () => {
    await get();
    const { instrumented, request } = seen.pop()!;
    expect(instrumented).toBe(false);
    const headers: Record<string, string> = {};
    propagateUnsampled(request, headers);
    expect(headers.traceparent).toMatch(UNSAMPLED);
    expect(unsampledLogFields(request)).toEqual({ trace_id: headers.traceparent.slice(3, 35), trace_flags: '00' });
  });

  it('hands a sampled one (here: a trusted sampled parent) to the instrumentation', async () => {
    await get({ traceparent: SAMPLED_PARENT });
    const { instrumented, request } = seen.pop()!;
    expect(instrumented).toBe(true);
    const headers: Record<string, string> = {};
    propagateUnsampled(request, headers);
    expect(headers).toEqual({});
    expect(unsampledLogFields(request)).toEqual({});
  });

  it('passes an untraced path (a probe) past the instrumentation with no decision to log or propagate', async () => {
    await get({ traceparent: SAMPLED_PARENT }, '/health/live');
    const { instrumented, request } = seen.pop()!;
    expect(instrumented).toBe(false);
    expect(unsampledLogFields(request)).toEqual({});
  });
});
