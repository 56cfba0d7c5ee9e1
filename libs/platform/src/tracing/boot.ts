import { TracingRole, tracingRequested, trustIncomingTraceparent } from './tracing-environment';

/**
 * Starts OpenTelemetry when the environment asks for it, before the app's modules load (instrumentations
 * patch `http`, `express`, `pg`, `ioredis`, `pino` as they are required). Off: the SDK is never required.
 * A bad value stops the process with one line, like every configuration error.
 */
export function bootTracing(role: TracingRole, defaultServiceName: string): void {
  try {
    const trustIncoming = role === 'internal' || trustIncomingTraceparent();
    if (!tracingRequested()) return;
    // Lazy on purpose: the SDK and its instrumentations are loaded only when tracing is on.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { startTracing } = require('./start-tracing') as typeof import('./start-tracing');
    startTracing({ role, trustIncoming, defaultServiceName });
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
