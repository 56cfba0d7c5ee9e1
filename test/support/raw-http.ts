import { connect, Socket } from 'node:net';

/** An answer read off a raw socket: what a client that speaks HTTP/1.1 by hand receives. */
export interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: string;
  json: unknown;
  /** The server closed the connection after answering. */
  closed: boolean;
}

/** Opens a TCP connection to the origin of `url`. */
export async function openSocket(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

/**
 * Reads one answer from `socket` (which may already have been written to): status line, headers, and a body of
 * Content-Length bytes. Fails after `timeoutMs`.
 */
export function readReply(socket: Socket, timeoutMs = 10_000): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    let buffer = Buffer.alloc(0);
    let closed = false;
    let parsed: Omit<RawReply, 'closed'> | undefined;
    const timer = setTimeout(
      () => finish(new Error(`no complete answer within ${timeoutMs} ms: ${buffer.toString('latin1').slice(0, 200)}`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      tryParse();
    };
    const onClose = () => {
      closed = true;
      tryParse();
      if (!parsed)
        finish(new Error(`connection closed without a complete answer: ${buffer.toString('latin1').slice(0, 200)}`));
    };
    const finish = (error?: Error) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.off('end', onClose);
      if (error) reject(error);
      else resolve({ ...parsed!, closed });
    };
    const tryParse = () => {
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine, ...lines] = buffer.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(headers['content-length'] ?? 0);
      if (buffer.length < end + 4 + length) return;
      const body = buffer.subarray(end + 4, end + 4 + length).toString('utf8');
      let json: unknown;
      try {
        json = body ? JSON.parse(body) : undefined;
      } catch {
        json = undefined;
      }
      parsed = { status: Number(statusLine.split(' ')[1]), headers, body, json };
      // Give the server a moment to close, so that `closed` says whether it did.
      if (closed || headers.connection?.toLowerCase() !== 'close') finish();
      else setTimeout(() => finish(), 200);
    };
    socket.on('data', onData);
    socket.once('end', onClose);
    socket.once('close', onClose);
  });
}

/** Sends `request` as it is (CRLFs included) on a new connection and reads one answer. */
export async function rawRequest(url: string, request: string | Buffer, timeoutMs?: number): Promise<RawReply> {
  const socket = await openSocket(url);
  try {
    const reply = readReply(socket, timeoutMs);
    socket.write(request);
    return await reply;
  } finally {
    socket.destroy();
  }
}
