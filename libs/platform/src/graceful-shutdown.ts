import { INestApplication, Logger } from '@nestjs/common';
import type { Server } from 'node:http';

/**
 * Stops taking new connections, lets in-flight requests finish, runs the shutdown hooks (pools, Redis,
 * metrics) and resolves; after `graceMs` the remaining connections are cut. Idle keep-alive connections are
 * closed as they become idle, so that a balancer's pooled connections do not hold the process open.
 */
export async function shutDownGracefully(app: INestApplication, graceMs: number): Promise<boolean> {
  const server = app.getHttpServer() as Server;
  const sweeper = setInterval(() => server.closeIdleConnections(), 50);
  let timedOut = false;
  const deadline = setTimeout(() => {
    timedOut = true;
    server.closeAllConnections();
  }, graceMs);
  try {
    await app.close();
  } finally {
    clearInterval(sweeper);
    clearTimeout(deadline);
  }
  return !timedOut;
}

/** On SIGTERM or SIGINT: shut down gracefully, then exit 0 (1 when the grace period ran out). */
export function exitGracefullyOnSignals(app: INestApplication, graceMs: number, name: string): void {
  const logger = new Logger(name);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.log(`${signal}: finishing in-flight requests (grace ${graceMs} ms)`);
    shutDownGracefully(app, graceMs).then(
      (clean) => process.exit(clean ? 0 : 1),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
