import { PLAN_NAMES } from '@app/contract';
import { AdminApiError, AdminClient, redirectAfterSave, setFlash, usageTable } from '@app/web';
import { Body, Controller, Get, HttpCode, Param, Post, Query, Render, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { act, field, limitsFrom, segment } from '../actions';
import { describeChanges } from '../audit/describe-changes';
import { tokenOf } from '../auth/operator';
import { daysAgo, isUnavailable, section } from '../sections';
import type {
  AdminAuditPage,
  AdminConsumer,
  AdminConsumerPage,
  AdminCurrentUsage,
  AdminIssuedKey,
  AdminKey,
  AdminRotatedKey,
  AdminUsageHistory,
} from '@app/web';

/** Rotation overlaps offered (the admin API allows 0 to 7 days). */
export const OVERLAPS = [
  { seconds: 0, label: 'None: the old key stops now' },
  { seconds: 3_600, label: '1 hour' },
  { seconds: 86_400, label: '1 day' },
  { seconds: 7 * 86_400, label: '7 days' },
];

const PAGE = 50;

/** Consumers: search by name prefix, a consumer's page, and every change an operator makes to one. */
@Controller('consumers')
export class ConsumersController {
  constructor(private readonly admin: AdminClient) {}

  @Get()
  @Render('consumers')
  async list(@Req() request: Request, @Query('q') q?: string, @Query('after') after?: string) {
    const search = typeof q === 'string' ? q.trim() : '';
    const page = await section(() =>
      this.admin.get<AdminConsumerPage>(tokenOf(request), '/consumers', {
        prefix: search || undefined,
        after,
        limit: PAGE,
      }),
    );
    return {
      title: 'Consumers',
      search,
      page: isUnavailable(page)
        ? page
        : {
            items: page.items.map((c) => ({
              ...c,
              activeKeys: c.keys.filter((k) => k.state === 'active').length,
              href: `/consumers/${segment(c.name)}`,
            })),
            next:
              page.next === null
                ? null
                : `/consumers?${new URLSearchParams({ ...(search ? { q: search } : {}), after: page.next }).toString()}`,
          },
    };
  }

  @Get(':name')
  @Render('consumer')
  show(@Req() request: Request, @Param('name') name: string) {
    return this.consumerPage(request, name);
  }

  /** The consumer page's model; `planForm` re-shows the plan form as it was typed, with the API's refusal. */
  private async consumerPage(
    request: Request,
    name: string,
    planForm?: { plan: string; perMinute: string; perDay: string; error: string },
  ) {
    const token = tokenOf(request);
    const consumer = await this.admin.get<AdminConsumer>(token, `/consumers/${segment(name)}`);
    const [usage, history, audit] = await Promise.all([
      section(() => this.admin.get<AdminCurrentUsage>(token, `/consumers/${segment(name)}/usage`)),
      section(() =>
        this.admin.get<AdminUsageHistory>(token, `/consumers/${segment(name)}/usage/history`, {
          granularity: 'day',
          from: daysAgo(29),
        }),
      ),
      section(() => this.admin.get<AdminAuditPage>(token, '/audit', { target: name, order: 'desc', limit: 50 })),
    ]);
    return {
      title: consumer.name,
      chart: true,
      consumer,
      path: `/consumers/${segment(consumer.name)}`,
      plans: PLAN_NAMES.map((plan) => ({ value: plan, selected: plan === (planForm?.plan ?? consumer.plan) })),
      planForm: planForm ?? { perMinute: consumer.limits?.perMinute ?? '', perDay: consumer.limits?.perDay ?? '' },
      overlaps: OVERLAPS.map((o) => ({ ...o, selected: o.seconds === 86_400 })),
      keys: consumer.keys.map((k) => ({ ...k, active: k.state === 'active' })),
      usage,
      history: isUnavailable(history)
        ? history
        : usageTable(`${consumer.name}: requests by outcome, last 30 days (daily, UTC)`, 'day', history.buckets),
      audit: isUnavailable(audit)
        ? audit
        : audit.items.map((entry) => ({ ...entry, summary: describeChanges(entry.changes) })),
    };
  }

  @Post(':name/plan')
  async savePlan(
    @Req() request: Request,
    @Res() response: Response,
    @Param('name') name: string,
    @Body() body: unknown,
  ): Promise<void> {
    const typed = { plan: field(body, 'plan'), perMinute: field(body, 'perMinute'), perDay: field(body, 'perDay') };
    const limits = limitsFrom(body);
    let updated: AdminConsumer;
    try {
      updated = await this.admin.patch<AdminConsumer>(tokenOf(request), `/consumers/${segment(name)}`, {
        plan: typed.plan,
        limits,
      });
    } catch (error) {
      // Refused input: the page again, the form as typed, the API's message next to it (no redirect).
      if (!(error instanceof AdminApiError) || error.status !== 400) throw error;
      response
        .status(400)
        .render('consumer', await this.consumerPage(request, name, { ...typed, error: error.message }));
      return;
    }
    setFlash(
      request,
      'success',
      `Saved: ${updated.name} is on the ${updated.plan} plan${updated.effectiveLimits ? ` (${updated.effectiveLimits.perMinute}/min, ${updated.effectiveLimits.perDay}/day)` : ''}.`,
    );
    await redirectAfterSave(request, response, `/consumers/${segment(name)}`);
  }

  @Post(':name/disable')
  disable(@Req() request: Request, @Res() response: Response, @Param('name') name: string): Promise<void> {
    return act(request, response, `/consumers/${segment(name)}`, async () => {
      await this.admin.post(tokenOf(request), `/consumers/${segment(name)}/disable`);
      return `${name} is disabled: its keys are refused until it is enabled again.`;
    });
  }

  @Post(':name/enable')
  enable(@Req() request: Request, @Res() response: Response, @Param('name') name: string): Promise<void> {
    return act(request, response, `/consumers/${segment(name)}`, async () => {
      await this.admin.post(tokenOf(request), `/consumers/${segment(name)}/enable`);
      return `${name} is enabled.`;
    });
  }

  @Post(':name/unban')
  unban(@Req() request: Request, @Res() response: Response, @Param('name') name: string): Promise<void> {
    return act(request, response, `/consumers/${segment(name)}`, async () => {
      await this.admin.post(tokenOf(request), `/consumers/${segment(name)}/unban`);
      return `${name} is no longer banned.`;
    });
  }

  /** The new key is rendered in this answer only (never stored by the console, never in a redirect). */
  @Post(':name/keys')
  @HttpCode(201)
  @Render('new-key')
  async issue(@Req() request: Request, @Param('name') name: string) {
    const key = await this.admin.post<AdminIssuedKey>(tokenOf(request), `/consumers/${segment(name)}/keys`, {});
    return { title: 'New key', name, path: `/consumers/${segment(name)}`, key, heading: `New key for ${name}` };
  }

  @Post(':name/keys/:keyId/rotate')
  @HttpCode(201)
  @Render('new-key')
  async rotate(
    @Req() request: Request,
    @Param('name') name: string,
    @Param('keyId') keyId: string,
    @Body() body: unknown,
  ) {
    const overlap = Number(field(body, 'overlapSeconds') || 86_400);
    const rotated = await this.admin.post<AdminRotatedKey>(
      tokenOf(request),
      `/consumers/${segment(name)}/keys/${segment(keyId)}/rotate`,
      { overlapSeconds: overlap },
    );
    return {
      title: 'Key rotated',
      name,
      path: `/consumers/${segment(name)}`,
      key: rotated.key,
      previous: rotated.previous,
      heading: `Key rotated for ${name}`,
    };
  }

  @Get(':name/keys/:keyId/revoke')
  @Render('confirm')
  async confirmRevoke(@Req() request: Request, @Param('name') name: string, @Param('keyId') keyId: string) {
    const consumer = await this.admin.get<AdminConsumer>(tokenOf(request), `/consumers/${segment(name)}`);
    const key = consumer.keys.find((k) => k.id === keyId);
    return {
      title: 'Revoke key',
      heading: `Revoke key ${key?.hint ?? keyId} of ${consumer.name}?`,
      text: 'Every request with this key is refused within a second, on every instance. This cannot be undone.',
      action: `/consumers/${segment(name)}/keys/${segment(keyId)}/revoke`,
      button: 'Revoke key',
      cancel: `/consumers/${segment(name)}`,
    };
  }

  @Post(':name/keys/:keyId/revoke')
  revoke(
    @Req() request: Request,
    @Res() response: Response,
    @Param('name') name: string,
    @Param('keyId') keyId: string,
  ): Promise<void> {
    return act(request, response, `/consumers/${segment(name)}`, async () => {
      const keys = await this.admin.post<AdminKey[]>(
        tokenOf(request),
        `/consumers/${segment(name)}/keys/${segment(keyId)}/revoke`,
      );
      return `Key ${keys.map((k) => k.hint).join(', ')} is revoked.`;
    });
  }
}
