import { createServer, request as httpRequest, Server } from 'node:http';

export interface ForwardingProxy {
  url: string;
  close(): Promise<void>;
}

/**
 * A bare reverse proxy that does what nginx's `proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for`
 * does: it appends the address of whoever connected to it to the X-Forwarded-For the client sent.
 */
export async function startForwardingProxy(target: string): Promise<ForwardingProxy> {
  const upstream = new URL(target);
  const server: Server = createServer((incoming, outgoing) => {
    const sent = incoming.headers['x-forwarded-for'];
    const peer = incoming.socket.remoteAddress ?? '';
    const headers = { ...incoming.headers, 'x-forwarded-for': sent ? `${String(sent)}, ${peer}` : peer };
    const forward = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forward.on('error', () => outgoing.destroy());
    incoming.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
