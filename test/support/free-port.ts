import { createServer } from 'node:net';

/** Ports handed out by this process: a free port is not taken until its server starts, so never give one twice. */
const handedOut = new Set<number>();

/** A free TCP port on loopback (the OS picks it; we release it at once), never 6379: the shared Redis. */
export async function freePort(): Promise<number> {
  for (;;) {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    if (!handedOut.has(port) && port !== 6379) {
      handedOut.add(port);
      return port;
    }
  }
}
