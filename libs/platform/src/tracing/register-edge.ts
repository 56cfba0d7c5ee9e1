/**
 * The gateway's first import (before Nest or anything it instruments is loaded): tracing on when the OTEL_*
 * variables say so, with the client's `traceparent` ignored unless OTEL_TRUST_INCOMING_TRACEPARENT=true.
 */
import { bootTracing } from './boot';

bootTracing('edge', 'petstore-gateway');
