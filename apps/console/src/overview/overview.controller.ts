import { AdminApi, usageTable } from '@app/web';
import { Controller, Get, Query, Req } from '@nestjs/common';
import type { Request } from 'express';
import { personOf } from '../audit/audit-row';
import { abilitiesOfRequest, tokenOf } from '../auth/operator';
import { OverviewView, Page } from '../console.views';
import { daysAgo, hoursAgo, isUnavailable, section } from '../sections';

/** The ranges the top lists can cover: the current bucket included, as the usage API counts. */
export const TOP_RANGES: Record<string, { label: string; from: () => string }> = {
  '24h': { label: 'Last 24 hours', from: () => hoursAgo(23) },
  '7d': { label: 'Last 7 days', from: () => daysAgo(6) },
  '30d': { label: 'Last 30 days', from: () => daysAgo(29) },
};

/** The fleet at a glance: requests by outcome (24 h hourly, 30 days daily), top consumers, pending plan requests. */
@Controller()
export class OverviewController {
  constructor(private readonly admin: AdminApi) {}

  @Get()
  @Page('overview')
  async overview(@Req() request: Request, @Query('range') rangeParam?: string): Promise<OverviewView> {
    const admin = this.admin.as(tokenOf(request));
    const can = abilitiesOfRequest(request);
    const range = rangeParam !== undefined && rangeParam in TOP_RANGES ? rangeParam : '24h';
    const from = TOP_RANGES[range].from();
    const [hourly, daily, byRequests, byRateLimited, pending] = await Promise.all([
      section(() => admin.GET('/usage/history', { params: { query: { granularity: 'hour' } } }), can.fleetUsageRead),
      section(() => admin.GET('/usage/history', { params: { query: { granularity: 'day' } } }), can.fleetUsageRead),
      section(
        () => admin.GET('/usage/top', { params: { query: { by: 'requests', limit: 10, from } } }),
        can.fleetUsageRead,
      ),
      section(
        () => admin.GET('/usage/top', { params: { query: { by: 'rateLimited', limit: 10, from } } }),
        can.fleetUsageRead,
      ),
      section(
        () => admin.GET('/plan-requests', { params: { query: { status: 'pending', limit: 20 } } }),
        can.planRequestsRead,
      ),
    ]);
    return {
      title: 'Overview',
      chart: true,
      hourly: isUnavailable(hourly)
        ? hourly
        : usageTable('Fleet requests by outcome, last 24 hours (hourly, UTC)', 'hour', hourly.buckets),
      daily: isUnavailable(daily)
        ? daily
        : usageTable('Fleet requests by outcome, last 30 days (daily, UTC)', 'day', daily.buckets),
      ranges: Object.entries(TOP_RANGES).map(([value, { label }]) => ({ value, label, selected: value === range })),
      rangeLabel: TOP_RANGES[range].label,
      byRequests,
      byRateLimited: isUnavailable(byRateLimited)
        ? byRateLimited
        : { ...byRateLimited, consumers: byRateLimited.consumers.filter((c) => c.rateLimited > 0) },
      // Who asked, in the audit page's words: the developer's email for the portal's requests.
      pending: isUnavailable(pending)
        ? pending
        : { ...pending, items: pending.items.map((r) => ({ ...r, requester: personOf(r.requestedBy) })) },
      nothingReadable: [hourly, daily, byRequests, byRateLimited, pending].every(
        (p) => isUnavailable(p) && p.forbidden,
      ),
    };
  }
}
