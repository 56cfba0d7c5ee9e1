import type { RefusalReason } from './address-policy';

/**
 * Why an outbound request got no answer (docs/webhooks.md):
 * - `invalid_url`: not an absolute `http:`/`https:` URL, or one with credentials in it;
 * - `https_required`: plain `http:` where HTTPS is required (production) and the allow-list does not name the target;
 * - `refused_target`: the host is, or resolves to, an address of a refused class (`reason`, `address`);
 * - `timeout`: no complete answer (connection, headers and body) within the attempt's time;
 * - `connect_error`: the name did not resolve, the connection was refused, reset or its TLS failed, or it broke
 *   before the answer was complete;
 * - `too_large`: the answer's headers alone were over undici's limit (a body over the cap is truncated instead:
 *   OutboundResponse.truncated).
 */
export type OutboundFailureKind =
  'invalid_url' | 'https_required' | 'refused_target' | 'timeout' | 'connect_error' | 'too_large';

export interface OutboundFailure {
  kind: OutboundFailureKind;
  /** One line for a delivery log: what was refused or what failed (no secret: never headers nor the body). */
  message: string;
  /** For `refused_target`: the address refused, and why. */
  address?: string;
  reason?: RefusalReason;
  latencyMs: number;
}

/**
 * The remote side's answer, whatever its status: redirects are not followed (a 3xx comes back as it is, its
 * Location among the headers) and the caller decides what a non-2xx means.
 */
export interface OutboundResponse {
  kind: 'response';
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** At most maxResponseBytes of the body; `truncated` when the answer had more (the rest was never read). */
  body: Buffer;
  truncated: boolean;
  /** From the call to the end of the body (or the cut), DNS resolution and connection included. */
  latencyMs: number;
}

export type OutboundResult = OutboundResponse | OutboundFailure;

/** Carries what stopped a connection before it was made (a refusal, a failed resolution: safe-dispatcher.ts) out through undici to send(). */
export class OutboundRefusal extends Error {
  constructor(readonly failure: Omit<OutboundFailure, 'latencyMs'>) {
    super(failure.message);
    this.name = 'OutboundRefusal';
  }
}
