import type { ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { HttpReceiver, type ReceivedRequest } from './http-receiver';

/** How the receiver answers now. */
export type ReceiverMode = { kind: 'up' } | { kind: 'fail'; status: number } | { kind: 'slow'; ms: number };

/** A message as the receiver accepted it (its first arrival; repeats are counted, not kept twice). */
export interface AcceptedMessage {
  path: string;
  webhookId: string;
  body: Record<string, unknown>;
}

/**
 * A webhook receiver as the issue asks for one (test/e2e/webhooks/): it verifies every request's signature with the
 * `standardwebhooks` package (the secret of the path it came to), deduplicates by `webhook-id`, and can be made to
 * fail, to answer slowly, or be killed (its port closed) and started again on the same port. `now` is the clock
 * the replay window is judged by: the gateway's injected one, when a test moves it.
 */
export class WebhookReceiver {
  /** First arrivals, per path, in the order they came. */
  readonly accepted: AcceptedMessage[] = [];
  /** Every request that verified, repeats included. */
  deliveries = 0;
  /** Requests whose signature did not verify (must stay empty). */
  readonly refused: Array<{ path: string; reason: string }> = [];
  private readonly secrets = new Map<string, string>();
  private readonly seen = new Set<string>();
  private readonly ids: string[] = [];
  private mode: ReceiverMode = { kind: 'up' };
  private readonly modes = new Map<string, ReceiverMode>();
  private receiver?: HttpReceiver;
  private boundPort = 0;
  /** Called with each request as it arrives, before it is answered. */
  onRequest?: (path: string, request: ReceivedRequest) => void;

  constructor(private readonly now: () => number = Date.now) {}

  async start(): Promise<void> {
    this.receiver = await HttpReceiver.start({ port: this.boundPort });
    this.boundPort = this.receiver.port;
    this.receiver.answer((request, response) => this.handle(request, response));
  }

  /** Dead: the port is closed, connections are refused. */
  async kill(): Promise<void> {
    await this.receiver?.close();
    this.receiver = undefined;
  }

  get port(): number {
    return this.boundPort;
  }

  /** Whether it takes connections (started and not killed). */
  get alive(): boolean {
    return this.receiver !== undefined;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** The endpoint secret requests to `path` are verified with. */
  expect(path: string, secret: string): void {
    this.secrets.set(path, secret);
  }

  /** How requests to `path` (every path, without one) are answered from now on. */
  answer(mode: ReceiverMode, path?: string): void {
    if (path === undefined) this.mode = mode;
    else this.modes.set(path, mode);
  }

  /** The webhook-id of every request that verified, in order, repeats and refused answers included. */
  requestIds(): string[] {
    return [...this.ids];
  }

  /** The first arrivals at `path`, in order. */
  at(path: string): AcceptedMessage[] {
    return this.accepted.filter((m) => m.path === path);
  }

  private handle(request: ReceivedRequest, response: ServerResponse): void {
    const path = request.url;
    this.onRequest?.(path, request);
    const secret = this.secrets.get(path);
    try {
      if (!secret) throw new Error('no secret for this path');
      // The package judges the timestamp by Date.now(): here, by the clock the gateway signs with.
      const realNow = Date.now;
      const now = this.now();
      Date.now = () => now;
      try {
        new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
      } finally {
        Date.now = realNow;
      }
    } catch (error) {
      this.refused.push({ path, reason: (error as Error).message });
      response.writeHead(400).end();
      return;
    }
    this.ids.push(String(request.headers['webhook-id']));
    const mode = this.modes.get(path) ?? this.mode;
    const finish = () => {
      if (mode.kind === 'fail') return void response.writeHead(mode.status).end();
      this.deliveries += 1;
      const id = String(request.headers['webhook-id']);
      if (!this.seen.has(`${path} ${id}`)) {
        this.seen.add(`${path} ${id}`);
        this.accepted.push({ path, webhookId: id, body: JSON.parse(request.body) as Record<string, unknown> });
      }
      response.writeHead(204).end();
    };
    if (mode.kind === 'slow') setTimeout(finish, mode.ms);
    else finish();
  }

  async close(): Promise<void> {
    await this.kill();
  }
}
