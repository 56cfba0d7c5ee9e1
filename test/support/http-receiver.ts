import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';

/** One request a receiver got, read whole. */
export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** The address the connection reached (which of 127.0.0.1, 127.0.0.2...). */
  localAddress: string;
  /** The TLS server name the client sent (SNI), for an HTTPS receiver. */
  servername?: string;
}

export type ReceiverHandler = (request: ReceivedRequest, response: ServerResponse) => void;

/**
 * An HTTP(S) server on a loopback address standing for a webhook receiver (test/e2e/outbound/): it counts the
 * connections it accepted and keeps every request it read, so a test can say that a refused target saw nothing at
 * all. The handler answers; by default 204.
 */
export class HttpReceiver {
  readonly requests: ReceivedRequest[] = [];
  connections = 0;
  private readonly sockets = new Set<Socket>();
  private handler: ReceiverHandler = (_request, response) => response.writeHead(204).end();

  private constructor(readonly server: Server) {}

  static async start(
    options: { host?: string; port?: number; tls?: { key: string; cert: string } } = {},
  ): Promise<HttpReceiver> {
    const server = options.tls ? createHttpsServer(options.tls) : createHttpServer();
    const receiver = new HttpReceiver(server);
    server.on('connection', (socket: Socket) => {
      receiver.connections += 1;
      receiver.sockets.add(socket);
      socket.on('close', () => receiver.sockets.delete(socket));
    });
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const received: ReceivedRequest = {
          method: request.method ?? '',
          url: request.url ?? '',
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          localAddress: request.socket.localAddress ?? '',
          servername: (request.socket as TLSSocket).servername || undefined,
        };
        receiver.requests.push(received);
        receiver.handler(received, response);
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
    });
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** How the next requests are answered. */
  answer(handler: ReceiverHandler): void {
    this.handler = handler;
  }

  /** Closes the server and every connection still open (a handler that never answers leaves some). */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
