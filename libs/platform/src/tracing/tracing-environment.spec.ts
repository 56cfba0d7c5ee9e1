import { tracingRequested, trustIncomingTraceparent } from './tracing-environment';

describe('tracingRequested', () => {
  it('is off without an exporter setting', () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBe(false);
  });
  it('is on with an OTLP endpoint (general or for traces) or a named exporter', () => {
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
  });
  it('stays off when the exporter is none or the SDK is disabled, whatever the endpoint', () => {
    expect(
      tracingRequested({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }),
    ).toBe(false);
    expect(tracingRequested({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(
      false,
    );
  });
});

describe('trustIncomingTraceparent', () => {
  it('is false unless set to true', () => {
    expect(trustIncomingTraceparent({})).toBe(false);
    expect(trustIncomingTraceparent({ OTEL_TRUST_INCOMING_TRACEPARENT: 'false' })).toBe(false);
    expect(trustIncomingTraceparent({ OTEL_TRUST_INCOMING_TRACEPARENT: 'TRUE' })).toBe(true);
  });
  it('refuses anything else with one line naming the variable and the value', () => {
    expect(() => trustIncomingTraceparent({ OTEL_TRUST_INCOMING_TRACEPARENT: 'yes' })).toThrow(
      'Invalid configuration: OTEL_TRUST_INCOMING_TRACEPARENT must be true or false (got "yes")',
    );
  });
});
