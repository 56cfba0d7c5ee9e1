import { parseDateTime } from '@app/contract';
import { AdminApi, AdminApiError, refusalText } from '@app/web';
import { Controller, Get, Query, Req } from '@nestjs/common';
import type { Request } from 'express';
import { tokenOf } from '../auth/operator';
import { AuditView, Page } from '../console.views';
import { auditRowOf } from './audit-row';
import type { AdminAuditPage } from '@app/web';

interface AuditFilter {
  actor?: string;
  target?: string;
  action?: string;
  from?: string;
  to?: string;
  after?: string;
}

/** A date (YYYY-MM-DD) or a date-time from a form field, as the admin API's ISO 8601 (UTC); blank: undefined. */
function instant(value: string | undefined, endOfDay = false): string | undefined {
  const v = (value ?? '').trim();
  if (v === '') return undefined;
  // A date that is no day (2026-13-45) goes on as typed: the admin API refuses it, and the page says so.
  // Read by the admin API's own parser (libs/contract), so a day the page takes is one the API takes.
  const day = /^\d{4}-\d{2}-\d{2}$/.test(v) ? parseDateTime(v, 'date-time-or-date') : undefined;
  if (day && 'ms' in day) return endOfDay ? new Date(day.ms + 86_400_000).toISOString() : `${v}T00:00:00Z`;
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(v)) return `${v}:00Z`;
  return v;
}

/** The audit log (audit:read), filtered by actor, target, action and time; newest first, paged to older entries. */
@Controller('audit')
export class AuditController {
  constructor(private readonly admin: AdminApi) {}

  @Get()
  @Page('audit')
  async list(@Req() request: Request, @Query() query: AuditFilter): Promise<AuditView> {
    const filter = {
      actor: query.actor?.trim() || undefined,
      target: query.target?.trim() || undefined,
      action: query.action?.trim() || undefined,
      from: instant(query.from),
      to: instant(query.to, true),
      order: 'desc' as const,
      after: query.after || undefined,
      limit: 100,
    };
    const typed = {
      actor: query.actor ?? '',
      target: query.target ?? '',
      action: query.action ?? '',
      from: query.from ?? '',
      to: query.to ?? '',
    };
    let page: AdminAuditPage;
    try {
      page = await this.admin.as(tokenOf(request)).GET('/audit', { params: { query: filter } });
    } catch (error) {
      // A filter the API refuses (a malformed time): the message above the form, what was typed kept.
      if (error instanceof AdminApiError && error.status === 400)
        return {
          title: 'Audit log',
          typed,
          error: refusalText(error, {
            VALIDATION_FAILED: 'These filters were not accepted: write dates as YYYY-MM-DD (UTC).',
          }),
          items: [],
          next: null,
        };
      throw error;
    }
    const nextQuery = Object.fromEntries(
      Object.entries({ ...typed, after: page.next ?? '' }).filter(([, v]) => v !== ''),
    );
    return {
      title: 'Audit log',
      typed,
      items: page.items.map(auditRowOf),
      next: page.next === null ? null : `/audit?${new URLSearchParams(nextQuery).toString()}`,
    };
  }
}
