import { Attributes, trace } from '@opentelemetry/api';

/**
 * What the edge decided about a request, as attributes of the active (server) span. Only names and outcomes:
 * never the key, the Authorization header or any other header. Without tracing there is no active span and
 * this is a no-op (the API's global no-op, nothing of the SDK is loaded).
 */
export interface EdgeOutcome {
  /** Authentication: the consumer when the key was valid, `null` when it was missing, malformed or unknown. */
  consumer?: { name: string; plan: string } | null;
  /** The plan the request was counted under (`anonymous` for requests without a valid key). */
  plan?: string;
  /** The rate-limit decision, and the window that refused. */
  rateLimit?: { outcome: 'allowed' | 'limited' | 'banned' | 'unavailable' | 'exhausted'; window?: string };
}

/** The attribute names, in one place (README "Tracing" lists them). */
export const EDGE_ATTRIBUTES = {
  authResult: 'petstore.auth.result',
  consumerName: 'petstore.consumer.name',
  consumerPlan: 'petstore.consumer.plan',
  rateLimitOutcome: 'petstore.rate_limit.outcome',
  rateLimitWindow: 'petstore.rate_limit.window',
} as const;

/**
 * On the gateway the active span where guards run is the server span (its Express layers are not traced, see
 * start-tracing.ts). The route template (`http.route`) is set by the Express instrumentation.
 */
export function recordEdgeOutcome(outcome: EdgeOutcome): void {
  const span = trace.getActiveSpan();
  if (!span || !span.isRecording()) return;
  const attributes: Attributes = {};
  if (outcome.consumer !== undefined) {
    attributes[EDGE_ATTRIBUTES.authResult] = outcome.consumer ? 'accepted' : 'refused';
    if (outcome.consumer) {
      attributes[EDGE_ATTRIBUTES.consumerName] = outcome.consumer.name;
      attributes[EDGE_ATTRIBUTES.consumerPlan] = outcome.consumer.plan;
    }
  }
  if (outcome.plan) attributes[EDGE_ATTRIBUTES.consumerPlan] = outcome.plan;
  if (outcome.rateLimit) {
    attributes[EDGE_ATTRIBUTES.rateLimitOutcome] = outcome.rateLimit.outcome;
    if (outcome.rateLimit.window) attributes[EDGE_ATTRIBUTES.rateLimitWindow] = outcome.rateLimit.window;
  }
  span.setAttributes(attributes);
}

/**
 * The route template of a request served without Express's router (the gateway's proxy fast path), where the
 * Express instrumentation cannot name it: `http.route` and the span name `METHOD route`, as it would have.
 */
export function recordEdgeRoute(method: string, route: string): void {
  const span = trace.getActiveSpan();
  if (!span || !span.isRecording()) return;
  span.setAttribute('http.route', route);
  span.updateName(`${method} ${route}`);
}
