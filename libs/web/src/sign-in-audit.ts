import { Logger } from '@nestjs/common';
import type { AdminAuditEvent } from './admin-api-types';
import { AdminApiError } from './admin-api-error';
import { AdminApi } from './typed-admin-client';

/** Per report: a slow admin API costs the reporter this long at most, never the person signing in. */
const REPORT_TIMEOUT_MS = 5000;

/**
 * A web app's sign-ins, failed sign-ins and lockouts, reported to the admin API's audit (POST /audit/events,
 * docs/admin-tokens.md "Sign-ins") after the answer: `report` returns at once and never throws, so a sign-in is
 * never slowed nor failed by the audit. When the admin API is down, slow or refuses the token (it lacks
 * actsForUsers), the event is lost to the admin audit and is only in this app's log: one warn line per event.
 */
export class SignInAudit {
  private readonly logger = new Logger('SignInAudit');
  private readonly pending = new Set<Promise<void>>();
  private readonly api: AdminApi;

  constructor(
    /** The admin API's address (ADMIN_URL). */
    adminUrl: string,
    /** The token that reports (the portal's own; the console's CONSOLE_AUDIT_TOKEN); undefined: none. */
    private readonly token: string | undefined,
  ) {
    this.api = new AdminApi({ baseUrl: adminUrl, timeoutMs: REPORT_TIMEOUT_MS });
  }

  /** Whether events are sent at all (a token is set). */
  get enabled(): boolean {
    return this.token !== undefined && this.token !== '';
  }

  /** Sends `event` after the answer, with `token` (default: this reporter's); never throws, never waits. */
  report(event: AdminAuditEvent, token = this.token): void {
    if (token === undefined || token === '') return;
    const done: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.api.as(token).POST('/audit/events', { body: event }))
      .catch((error: unknown) => {
        const code = error instanceof AdminApiError ? error.code : 'ERROR';
        this.logger.warn({
          event: 'audit event not recorded',
          kind: event.kind,
          code,
          reason: (error as Error).message,
        });
      })
      .finally(() => this.pending.delete(done));
    this.pending.add(done);
  }

  /** Resolves once every report started so far has finished (tests; shutdown). */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /** Nest calls it at shutdown (a provider's value): the events of the last answers are sent first. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.drain();
  }
}
