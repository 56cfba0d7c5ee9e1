import { AddressInfo, createServer, Server, Socket } from 'node:net';
import type { PGlite } from '@electric-sql/pglite';

const SSL_REQUEST = 80877103;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_V3 = 196608;
/** Messages after which a client waits for an answer: Sync, simple Query, Flush, FunctionCall, CopyDone/Fail. */
const ROUND_TRIP_ENDS = new Set(['S', 'Q', 'H', 'F', 'c', 'f']);
const TERMINATE = 'X';
/** NotificationResponse ('A'), sent by a backend at any time. */
const NOTIFICATION_RESPONSE = 0x41;

/**
 * Serves one PGlite to several connections (and processes) over PostgreSQL's wire protocol, safely.
 *
 * PGlite is a single session. @electric-sql/pglite-socket feeds it message by message, so the extended-protocol
 * messages of two connections (Parse, Bind, Execute, Sync) interleave and a Bind can meet the other
 * connection's unnamed statement; the pets service copes by keeping to one connection. Here a connection's
 * messages run as one unit up to the point where it waits for an answer (Sync, Query...), and while a
 * transaction is open only its owner runs; a connection that drops inside its transaction has it rolled back.
 * Notifications are forwarded to every connection (see forwardNotifications). What a single session cannot give
 * stays out: session settings and advisory locks are shared (every connection is the same backend).
 */
export class PgliteWireServer {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  /** Connections past their start-up (only those may receive asynchronous messages). */
  private readonly started = new WeakSet<Socket>();
  /** The connection whose transaction is open; others wait until it ends. */
  private owner: Socket | undefined;
  private waiters: Array<() => void> = [];

  constructor(private readonly db: PGlite) {
    this.server = createServer((socket) => this.accept(socket));
  }

  async listen(port = 0, host = '127.0.0.1'): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => resolve());
    });
    const address = this.server.address() as AddressInfo;
    return `${address.address}:${address.port}`;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: Socket): void {
    socket.setNoDelay(true);
    this.sockets.add(socket);
    let buffer = Buffer.alloc(0);
    let started = false;
    let batch: Buffer[] = [];
    // One chain per connection keeps its round trips in order.
    let chain: Promise<void> = Promise.resolve();
    const run = (work: () => Promise<void>) => {
      chain = chain.then(work).catch(() => {
        socket.destroy();
      });
    };

    socket.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        if (!started) {
          if (buffer.length < 8) return;
          const length = buffer.readInt32BE(0);
          if (buffer.length < length) return;
          const code = buffer.readInt32BE(4);
          const message = buffer.subarray(0, length);
          buffer = buffer.subarray(length);
          if (code === SSL_REQUEST) {
            socket.write('N');
          } else if (code === CANCEL_REQUEST) {
            socket.destroy();
            return;
          } else if (code === PROTOCOL_V3) {
            started = true;
            run(async () => {
              await this.execute(socket, [message]);
              this.started.add(socket);
            });
          } else {
            socket.destroy();
            return;
          }
          continue;
        }
        if (buffer.length < 5) return;
        const length = 1 + buffer.readInt32BE(1);
        if (buffer.length < length) return;
        const type = String.fromCharCode(buffer[0]);
        const message = buffer.subarray(0, length);
        buffer = buffer.subarray(length);
        if (type === TERMINATE) {
          socket.end();
          return;
        }
        batch.push(message);
        if (ROUND_TRIP_ENDS.has(type)) {
          const messages = batch;
          batch = [];
          run(() => this.execute(socket, messages));
        }
      }
    });
    const closed = () => {
      this.sockets.delete(socket);
      run(() => this.release(socket));
    };
    socket.on('close', closed);
    socket.on('error', () => socket.destroy());
  }

  /**
   * Runs a connection's messages as one unit, after any other connection's open transaction has ended. Who owns
   * the session is checked and changed only inside PGlite's mutex, so no unit slips into another's transaction.
   */
  private async execute(socket: Socket, messages: Buffer[]): Promise<void> {
    for (;;) {
      const turn = await this.db.runExclusive(async (): Promise<{ turn: Promise<void> } | undefined> => {
        // Wrapped: an async callback returning the promise itself would wait for it inside the mutex.
        if (this.owner !== undefined && this.owner !== socket)
          return { turn: new Promise<void>((resolve) => this.waiters.push(resolve)) };
        for (const message of messages) {
          const reply = await this.db.execProtocolRaw(
            new Uint8Array(message.buffer, message.byteOffset, message.length),
          );
          if (reply.length > 0 && socket.writable) socket.write(reply);
          this.forwardNotifications(socket, reply);
        }
        this.setOwner(this.db.isInTransaction() ? socket : undefined);
        return undefined;
      });
      if (turn === undefined) return;
      await turn.turn;
    }
  }

  /** A connection went away: roll back the transaction it left open, so that the others can go on. */
  private async release(socket: Socket): Promise<void> {
    await this.db.runExclusive(async () => {
      if (this.owner !== socket) return;
      if (this.db.isInTransaction()) {
        // Simple-protocol ROLLBACK: 'Q', length, text, NUL.
        const text = Buffer.from('ROLLBACK\0');
        const query = Buffer.alloc(5 + text.length);
        query.write('Q', 0);
        query.writeInt32BE(4 + text.length, 1);
        text.copy(query, 5);
        await this.db.execProtocolRaw(new Uint8Array(query)).catch(() => undefined);
      }
      this.setOwner(undefined);
    });
  }

  /**
   * In one session a NOTIFY is heard by the session itself, so PGlite returns it to the connection that sent
   * it. Every connection is that session, so each gets the notifications too: LISTEN/NOTIFY then works across
   * connections and processes as on a server (a connection that did not LISTEN ignores them, as pg does).
   */
  private forwardNotifications(from: Socket, reply: Uint8Array): void {
    const bytes = Buffer.from(reply.buffer, reply.byteOffset, reply.length);
    for (let offset = 0; offset + 5 <= bytes.length;) {
      const length = 1 + bytes.readInt32BE(offset + 1);
      if (bytes[offset] === NOTIFICATION_RESPONSE) {
        const notification = Buffer.from(bytes.subarray(offset, offset + length));
        for (const other of this.sockets)
          if (other !== from && other.writable && this.started.has(other)) other.write(notification);
      }
      offset += length;
    }
  }

  private setOwner(owner: Socket | undefined): void {
    this.owner = owner;
    if (owner !== undefined) return;
    const waiting = this.waiters;
    this.waiters = [];
    for (const wake of waiting) wake();
  }
}
