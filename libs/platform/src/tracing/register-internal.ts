/**
 * The pets service's first import: tracing on when the OTEL_* variables say so, continuing the trace the
 * gateway propagates (an internal service trusts its callers' `traceparent`).
 */
import { bootTracing } from './boot';

bootTracing('internal', 'petstore-pets');
