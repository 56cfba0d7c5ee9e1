import { INestApplication } from '@nestjs/common';
import type { Server } from 'node:net';
import { ConfigurationError } from './environment';

const WHY: Record<string, string> = {
  EADDRINUSE: 'is already in use',
  EACCES: 'needs privileges this process does not have',
  EADDRNOTAVAIL: 'is not an address of this machine',
};

/** The one line printed when a port cannot be had: which variable to change, and why. */
export function portError(error: NodeJS.ErrnoException, variable: string, port: number, host: string): Error {
  const why = error.code ? WHY[error.code] : undefined;
  if (!why) return error;
  return new ConfigurationError(
    `${variable}=${port} on ${host} ${why} (${error.code}): set ${variable} to a free port`,
  );
}

/** Listens on `port`; a port that cannot be had rejects with a ConfigurationError naming `variable`. */
export function listenOn(server: Server, port: number, host: string, variable: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => reject(portError(error, variable, port, host));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/** `app.listen`, but a taken port stops the app with one line naming `variable`, not a stack trace. */
export async function listenOrExplain(
  app: INestApplication,
  port: number,
  host: string,
  variable: string,
): Promise<void> {
  try {
    await app.listen(port, host);
  } catch (error) {
    throw portError(error as NodeJS.ErrnoException, variable, port, host);
  }
}
