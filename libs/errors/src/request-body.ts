import type { IncomingMessage } from 'node:http';
import { raw, type Request, type RequestHandler, type Response } from 'express';
import { ApiError } from './api-error';

/**
 * Reads a request's body as bytes, at most `limit` of them. Reads a body sent as it is (no Content-Encoding, or
 * `identity`: every request a client library sends unless told otherwise) straight from the request's `data` events;
 * a compressed one goes through body-parser's `raw()`, which inflates it under the same limit and raises the errors
 * the error mapping knows (an unsupported encoding 415, a body that does not match its encoding 400). body-parser
 * for every body cost a POST about 14 µs of the gateway's ~570 (content-type negotiation, raw-body's stream
 * plumbing, on-finished), the same work the direct read does in a few listeners.
 *
 * The checks are the same either way: a body over the limit is 413 (`Connection: close`, so the rest is not read),
 * a client that goes away before the end is 400 `MALFORMED_REQUEST`, and a request already read is refused rather
 * than taken for an empty one. The time a body may take is the server's `requestTimeout`, as before.
 * Resolves `undefined` for a request that declares no body.
 */
export function readRequestBody(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  if (!declaresBody(request)) return Promise.resolve(undefined);
  const encoding = request.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return readEncoded(request, limit);
  return readIdentity(request, limit);
}

/** Whether the request says a body follows (chunked, or a Content-Length other than 0). */
export function declaresBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** The 413 for a body over `limit`, closing the connection rather than reading the rest. */
export function payloadTooLarge(limit: number): ApiError {
  return new ApiError('PAYLOAD_TOO_LARGE', `The request body exceeds the limit of ${limit} bytes.`, {
    Connection: 'close',
  });
}

function unreadable(): ApiError {
  return new ApiError('MALFORMED_REQUEST', 'The request body could not be read.', { Connection: 'close' });
}

function readIdentity(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  // Read already, its client gone, or decoded to text by someone else: there is nothing to read, and guessing
  // an empty body would be wrong (body-parser takes a finished request for one without a body).
  if (request.readableEnded || request.destroyed || request.readableEncoding !== null)
    return Promise.reject(unreadable());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const done = (): void => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onFail);
      request.off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      length += chunk.length;
      if (length > limit) {
        done();
        // Stop reading: the 413 goes out with Connection: close, and the rest of the body is never read.
        request.pause();
        reject(payloadTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      done();
      resolve(length === 0 ? undefined : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length));
    };
    const onFail = (): void => {
      done();
      reject(unreadable());
    };
    // A client that goes away mid-body: the request closes without having ended.
    const onClose = (): void => {
      if (!request.readableEnded) onFail();
    };
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onFail);
    request.on('close', onClose);
  });
}

const inflatingReaders = new Map<number, RequestHandler>();

/** body-parser's inflation (gzip, deflate, br) under the limit; the body it reads is left on `request.body`. */
function readEncoded(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  let read = inflatingReaders.get(limit);
  if (!read) inflatingReaders.set(limit, (read = raw({ type: () => true, limit })));
  const carrier = request as Request;
  return new Promise((resolve, reject) => {
    // raw() reads nothing of the response; it takes one because it is a middleware.
    read(carrier, undefined as unknown as Response, (error?: unknown) => {
      if (error) reject(error);
      else resolve(Buffer.isBuffer(carrier.body) && carrier.body.length > 0 ? carrier.body : undefined);
    });
  });
}
