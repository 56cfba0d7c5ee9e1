import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigurationError } from '@app/platform';
import { loadGatewayConfig } from './gateway.config';
import { customerOf } from './usage-export.config';

const events = (env: Record<string, string>) => loadGatewayConfig(env).usage.events;

describe('USAGE_EVENTS_* in the gateway configuration', () => {
  it('is off by default, with a settle time of a minute', () => {
    expect(events({})).toMatchObject({
      format: 'off',
      settleMs: 60_000,
      stripeValue: 'count',
      name: 'petstore.api.usage',
    });
  });

  it('meters only successful answers in Stripe by default; other outcomes are named, unknown ones refused', () => {
    expect(events({}).stripeOutcomes).toEqual(['ok']);
    expect(events({ USAGE_EVENTS_STRIPE_OUTCOMES: 'ok, client_error' }).stripeOutcomes).toEqual(['ok', 'client_error']);
    expect(() => events({ USAGE_EVENTS_STRIPE_OUTCOMES: 'ok,429' })).toThrow(
      /USAGE_EVENTS_STRIPE_OUTCOMES must be a comma-separated list of ok, client_error, rate_limited, server_error/,
    );
  });

  it('names the missing variable of a format that is on', () => {
    expect(() => events({ USAGE_EVENTS_FORMAT: 'lago' })).toThrow(
      new ConfigurationError('Invalid configuration: USAGE_EVENTS_URL must be set when USAGE_EVENTS_FORMAT is lago'),
    );
    expect(() =>
      events({ USAGE_EVENTS_FORMAT: 'cloudevents', USAGE_EVENTS_URL: 'https://openmeter.example/api/v1/events' }),
    ).toThrow(/USAGE_EVENTS_SOURCE must be set/);
    expect(() =>
      events({ USAGE_EVENTS_FORMAT: 'stripe', USAGE_EVENTS_URL: 'https://api.stripe.com/v1/billing/meter_events' }),
    ).toThrow(/USAGE_EVENTS_NAME must be set when USAGE_EVENTS_FORMAT is stripe/);
    expect(() => events({ USAGE_EVENTS_FORMAT: 'kafka' })).toThrow(
      /USAGE_EVENTS_FORMAT must be one of off, cloudevents, lago, stripe/,
    );
  });

  it('refuses a settle time shorter than a flush when a format is on (and leaves USAGE_FLUSH_MS alone when off)', () => {
    const on = {
      USAGE_EVENTS_FORMAT: 'cloudevents',
      USAGE_EVENTS_URL: 'https://openmeter.example/api/v1/events',
      USAGE_EVENTS_SOURCE: 'urn:petstore:gateway',
    };
    expect(() => events({ ...on, USAGE_FLUSH_MS: '5000', USAGE_EVENTS_SETTLE_MS: '9999' })).toThrow(
      /USAGE_EVENTS_SETTLE_MS \(9999\) must be at least USAGE_FLUSH_MS \+ 5000 \(10000\)/,
    );
    expect(events({ ...on, USAGE_FLUSH_MS: '5000', USAGE_EVENTS_SETTLE_MS: '10000' }).settleMs).toBe(10_000);
    expect(events({ USAGE_FLUSH_MS: '300000' }).format).toBe('off');
  });

  it('maps consumers by the customers file first, then by the template', () => {
    const dir = mkdtempSync(join(tmpdir(), 'usage-events-'));
    try {
      const file = join(dir, 'customers.json');
      writeFileSync(file, JSON.stringify({ acme: 'cus_NciAYcXfLnqBoz' }));
      const config = events({
        USAGE_EVENTS_FORMAT: 'stripe',
        USAGE_EVENTS_URL: 'https://api.stripe.com/v1/billing/meter_events',
        USAGE_EVENTS_NAME: 'api_requests',
        USAGE_EVENTS_CUSTOMERS_FILE: file,
        USAGE_EVENTS_CUSTOMER_TEMPLATE: 'sub_{consumer}',
      });
      expect(customerOf(config.customers, 'acme')).toBe('cus_NciAYcXfLnqBoz');
      expect(customerOf(config.customers, 'beta')).toBe('sub_beta');
      expect(customerOf(events({}).customers, 'beta')).toBeUndefined();
      writeFileSync(file, JSON.stringify({ acme: 7 }));
      expect(() => events({ USAGE_EVENTS_CUSTOMERS_FILE: file })).toThrow(
        /the customer of acme must be a non-empty string/,
      );
      expect(() => events({ USAGE_EVENTS_CUSTOMER_TEMPLATE: 'sub_' })).toThrow(/must contain \{consumer\}/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
