import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';

/** A span as the OTLP/HTTP JSON encoding carries it, flattened: ids in hex, attributes as plain values. */
export interface ReceivedSpan {
  service: string;
  scope: string;
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  status?: { code?: number };
  attributes: Record<string, unknown>;
  /** Every string the export carried for this span (attributes, events, links, resource): for leak checks. */
  raw: string;
}

export const SPAN_KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3 } as const;

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}

const plain = (value: OtlpValue): unknown =>
  value.stringValue ??
  (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
  value.doubleValue ??
  value.boolValue ??
  value.arrayValue?.values?.map(plain);

const attributesOf = (list: OtlpAttribute[] = []) => Object.fromEntries(list.map((a) => [a.key, plain(a.value)]));

/**
 * A local OTLP/HTTP receiver (JSON encoding: the apps are started with OTEL_EXPORTER_OTLP_PROTOCOL=http/json),
 * standing in for a collector: it keeps every span it is sent, on loopback, no network.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  private server?: Server;

  async start(): Promise<string> {
    this.server = createServer((request, response) => {
      readBody(request).then((body) => {
        if (request.url === '/v1/traces') this.accept(body);
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }

  /** Waits until `ready` holds for the spans received so far (exports are batched, and come from two apps). */
  async waitFor<T>(ready: (spans: ReceivedSpan[]) => T | undefined | false, timeoutMs = 15_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const result = ready(this.spans);
      if (result) return result;
      if (Date.now() > deadline)
        throw new Error(
          `Spans not received in ${timeoutMs} ms; got: ${this.spans.map((s) => `${s.service} ${s.name}`).join(', ')}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  private accept(body: string): void {
    const payload = JSON.parse(body) as {
      resourceSpans?: {
        resource?: { attributes?: OtlpAttribute[] };
        scopeSpans?: {
          scope?: { name?: string };
          spans?: (Omit<ReceivedSpan, 'service' | 'scope' | 'attributes' | 'raw'> & { attributes?: OtlpAttribute[] })[];
        }[];
      }[];
    };
    for (const resourceSpans of payload.resourceSpans ?? []) {
      const resource = attributesOf(resourceSpans.resource?.attributes);
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          this.spans.push({
            ...span,
            parentSpanId: span.parentSpanId || undefined,
            service: String(resource['service.name']),
            scope: scopeSpans.scope?.name ?? '',
            attributes: attributesOf(span.attributes),
            raw: JSON.stringify({ span, resource: resourceSpans.resource }),
          });
        }
      }
    }
  }
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}
