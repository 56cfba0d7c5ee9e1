import { EXPECTED_VOLUME_MAX, MESSAGE_MAX, PLAN_NAMES, PlanName } from '@app/contract';
import { Body, Controller, Get, HttpCode, Param, Post, Req, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { AdminApiError, redirectAfterSave, setFlash, usageTable, USAGE_COLUMNS } from '@app/web';
import type { AdminConsumer, AdminKey, AdminPlanRequest } from '@app/web';
import { SignedInGuard, SignedInRequest } from '../accounts/session';
import { MAX_ACTIVE_KEYS, OVERLAPS, PortalApi } from './portal-api.service';

type Form = Record<string, unknown>;
const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const KEY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type RequestablePlan = Exclude<PlanName, 'free'>;

/** What each plan a Free consumer may ask for gives (gateway/plans.json's limits): a new plan must be described here. */
const PLAN_OFFERS: Record<RequestablePlan, string> = {
  pro: '300 a minute, 10,000 a day',
  business: '1,000 a minute, 100,000 a day',
  enterprise: 'limits agreed with you',
};

/** The plan form's choices: the contract's plans, less Free (the portal's consumers are on it). */
const REQUESTABLE_PLANS = PLAN_NAMES.filter((name): name is RequestablePlan => name !== 'free').map((name) => ({
  value: name,
  label: `${name[0].toUpperCase()}${name.slice(1)} (${PLAN_OFFERS[name]})`,
}));

/**
 * The signed-in developer's own consumer: plan, limits, usage, keys and plan requests. Every admin call names the
 * session's consumer, never one from the URL or the form: another account's keys cannot be reached by any URL
 * (a key id of another consumer is a 404 from the admin API, which checks it belongs to the named consumer).
 */
@Controller()
@UseGuards(SignedInGuard)
export class DashboardController {
  constructor(private readonly api: PortalApi) {}

  @Get('dashboard')
  async dashboard(@Req() request: SignedInRequest, @Res() response: Response): Promise<void> {
    const name = request.account.consumerName;
    const [consumer, usage, history, requests] = await Promise.all([
      this.api.consumer(name),
      this.api.usage(name),
      this.api.history(name),
      this.api.planRequests(name),
    ]);
    const minute = usage.windows.find((w) => w.name === 'minute');
    const day = usage.windows.find((w) => w.name === 'day');
    response.render('dashboard', {
      title: 'Dashboard',
      chart: history !== null,
      email: request.account.email,
      consumer,
      minute,
      day,
      banned: usage.banned,
      banSecondsLeft: usage.banSecondsLeft,
      usage:
        history === null
          ? null
          : usageTable(
              'Requests per day, last 30 days (UTC)',
              'day',
              history,
              USAGE_COLUMNS.filter((c) => c.key !== 'serverErrors'),
            ),
      keys: this.keyRows(consumer),
      canCreate: activeKeys(consumer) < MAX_ACTIVE_KEYS,
      maxKeys: MAX_ACTIVE_KEYS,
      overlaps: OVERLAPS,
      latestRequest: requests[requests.length - 1] as AdminPlanRequest | undefined,
    });
  }

  @Post('keys')
  @HttpCode(200)
  async createKey(@Req() request: SignedInRequest, @Res() response: Response): Promise<void> {
    const name = request.account.consumerName;
    if (activeKeys(await this.api.consumer(name)) >= MAX_ACTIVE_KEYS) {
      return this.back(
        request,
        response,
        'error',
        `You have ${MAX_ACTIVE_KEYS} active keys, the most a portal account holds: revoke one first.`,
      );
    }
    const key = await this.api.issueKey(name);
    response.render('new-key', { title: 'Your new API key', key: key.key });
  }

  @Post('keys/:id/rotate')
  @HttpCode(200)
  async rotate(
    @Param('id') id: string,
    @Body() body: Form,
    @Req() request: SignedInRequest,
    @Res() response: Response,
  ): Promise<void> {
    const overlap = OVERLAPS.find((o) => o.value === str(body.overlap));
    if (!KEY_ID.test(id) || !overlap)
      return this.back(request, response, 'error', 'Choose how long the old key keeps working.');
    try {
      const { key, previous } = await this.api.rotateKey(request.account.consumerName, id, overlap.seconds);
      response.render('new-key', { title: 'Your new API key', key: key.key, rotated: previous });
    } catch (error) {
      if (error instanceof AdminApiError && error.status < 500)
        return this.back(request, response, 'error', humane(error));
      throw error;
    }
  }

  @Get('keys/:id/revoke')
  async confirmRevoke(
    @Param('id') id: string,
    @Req() request: SignedInRequest,
    @Res() response: Response,
  ): Promise<void> {
    const key = KEY_ID.test(id)
      ? (await this.api.consumer(request.account.consumerName)).keys.find((k) => k.id === id)
      : undefined;
    if (!key) return this.back(request, response, 'error', 'No such key.');
    response.render('revoke', { title: 'Revoke a key', key });
  }

  @Post('keys/:id/revoke')
  @HttpCode(200)
  async revoke(@Param('id') id: string, @Req() request: SignedInRequest, @Res() response: Response): Promise<void> {
    if (!KEY_ID.test(id)) return this.back(request, response, 'error', 'No such key.');
    try {
      await this.api.revokeKey(request.account.consumerName, id);
    } catch (error) {
      if (error instanceof AdminApiError && error.status < 500)
        return this.back(request, response, 'error', humane(error));
      throw error;
    }
    return this.back(request, response, 'success', 'The key is revoked: every gateway instance refuses it now.');
  }

  @Get('plan')
  planForm(@Res() response: Response): void {
    response.render('plan', {
      title: 'Ask for a higher plan',
      plans: REQUESTABLE_PLANS,
      maxVolume: EXPECTED_VOLUME_MAX,
      maxMessage: MESSAGE_MAX,
    });
  }

  @Post('plan')
  @HttpCode(200)
  async requestPlan(@Body() body: Form, @Req() request: SignedInRequest, @Res() response: Response): Promise<void> {
    const typed = { plan: str(body.plan), expectedVolume: str(body.expectedVolume), message: str(body.message) };
    const errors: Record<string, string | undefined> = {
      plan: REQUESTABLE_PLANS.some((p) => p.value === typed.plan) ? undefined : 'Choose a plan.',
      expectedVolume:
        typed.expectedVolume.trim() === ''
          ? 'Say roughly how many requests you expect.'
          : typed.expectedVolume.length > EXPECTED_VOLUME_MAX
            ? `Use at most ${EXPECTED_VOLUME_MAX} characters.`
            : undefined,
      message: typed.message.length > MESSAGE_MAX ? `Use at most ${MESSAGE_MAX} characters.` : undefined,
    };
    const render = (status: number, extra: Record<string, unknown> = {}) =>
      response.status(status).render('plan', {
        title: 'Ask for a higher plan',
        plans: REQUESTABLE_PLANS,
        maxVolume: EXPECTED_VOLUME_MAX,
        maxMessage: MESSAGE_MAX,
        typed,
        errors,
        ...extra,
      });
    if (errors.plan || errors.expectedVolume || errors.message) return render(400);
    try {
      await this.api.requestPlan(request.account.consumerName, typed.plan, typed.expectedVolume.trim(), typed.message);
    } catch (error) {
      if (error instanceof AdminApiError && error.code === 'PLAN_REQUEST_PENDING')
        return render(409, { failed: 'You already have a request waiting for an answer.' });
      if (error instanceof AdminApiError && (error.status === 400 || error.status === 409))
        return render(error.status, { failed: humane(error) });
      throw error;
    }
    return this.back(request, response, 'success', 'Your request was sent. Its answer will show on this page.');
  }

  private keyRows(consumer: AdminConsumer): Array<AdminKey & { usable: boolean }> {
    return consumer.keys.map((k) => ({ ...k, usable: k.state === 'active' && k.replacedBy === null })).reverse();
  }

  private async back(
    request: SignedInRequest,
    response: Response,
    kind: 'success' | 'error',
    text: string,
  ): Promise<void> {
    setFlash(request, kind, text);
    await redirectAfterSave(request, response, '/dashboard');
  }
}

function activeKeys(consumer: AdminConsumer): number {
  return consumer.keys.filter((k) => k.state === 'active').length;
}

function humane(error: AdminApiError): string {
  if (error.status === 404) return 'No such key.';
  return error.message;
}
