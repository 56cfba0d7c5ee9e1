import {
  EXPECTED_VOLUME_MAX,
  MESSAGE_MAX,
  PLAN_NAMES,
  describeLimits,
  isEmailAddress,
  planTitle,
  rotationOverlap,
} from '@app/contract';
import type { PlanCatalogue } from '@app/contract';
import {
  Body,
  Controller,
  Get,
  HttpCode,
  Inject,
  NotFoundException,
  Param,
  Post,
  Req,
  Res,
  UseGuards,
} from '@nestjs/common';
import type { Response } from 'express';
import {
  AdminApiError,
  formTextError,
  creditsPanel,
  holdShownOnce,
  keyTable,
  PLAN_CATALOGUE,
  planStatement,
  policyCards,
  redirectAfterSave,
  refusalText,
  saveSession,
  setFlash,
  takeShownOnce,
  usageTable,
  USAGE_COLUMNS,
} from '@app/web';
import type { AdminConsumer, AdminPlanRequest, RefusalSentences } from '@app/web';
import { SignedInGuard, SignedInRequest } from '../accounts/signed-in.guard';
import { SHOWN_KEY } from '../accounts/shown-key';
import { DashboardView, NewKeyView, Page, PlanOffer, PlanView, renderView, RevokeView } from './dashboard.views';
import { Developer, developerOf, MAX_ACTIVE_KEYS, PortalApi } from '../admin-api/portal-api';

type Form = Record<string, unknown>;
const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const KEY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What the key pages say when the admin API refuses (chosen by code; the rest: libs/web's REFUSALS). */
const KEY_REFUSALS: RefusalSentences = {
  NOT_FOUND: 'No such key.',
  KEY_LIMIT_REACHED: `You have the most active keys an account holds: revoke one first.`,
};

/** What the plan page says when the admin API refuses a request (chosen by code). */
const PLAN_REFUSALS: RefusalSentences = {
  PLAN_UNCHANGED: 'You are on that plan already: choose another one.',
  PLAN_REQUEST_PENDING: 'You already have a request waiting for an answer.',
  VALIDATION_FAILED: 'The request was not accepted: check the plan and the expected volume, and try again.',
  FORBIDDEN: 'The portal cannot send a request for this plan: write to the operators instead.',
};

/**
 * The signed-in developer's own consumer: plan, limits, usage, keys and plan requests. Every admin call names the
 * session's consumer, never one from the URL or the form: another account's keys cannot be reached by any URL
 * (a key id of another consumer is a 404 from the admin API, which checks it belongs to the named consumer).
 */
@Controller()
@UseGuards(SignedInGuard)
export class DashboardController {
  constructor(
    private readonly api: PortalApi,
    @Inject(PLAN_CATALOGUE) private readonly plans: PlanCatalogue,
  ) {}

  /**
   * The account's consumer; one made before consumers carried an email gets the account's now, so that operators
   * find the developer by it (an email an operator set is left as it is).
   */
  private async consumerWithEmail(by: Developer, name: string): Promise<AdminConsumer> {
    const consumer = await this.api.consumer(by, name);
    return consumer.email === null && isEmailAddress(by.email) ? this.api.setContactEmail(by, name) : consumer;
  }

  @Get('dashboard')
  @Page('dashboard')
  async dashboard(@Req() request: SignedInRequest): Promise<DashboardView> {
    const name = request.account.consumerName;
    const by = developerOf(request.account, request);
    const [consumer, usage, history, requests, billing] = await Promise.all([
      this.consumerWithEmail(by, name),
      this.api.usage(by, name),
      this.api.history(by, name),
      this.api.planRequests(by, name),
      this.api.billing(by, name),
    ]);
    // The ledger only where credits are in force: a consumer without credits has nothing to show there. A ledger
    // that cannot be read leaves the rest of the dashboard (balance included) shown, with words in its place.
    let ledgerUnavailable = false;
    const ledger = billing?.credits
      ? await this.api.creditLedger(by, name).catch((error: unknown) => {
          if (!(error instanceof AdminApiError)) throw error;
          ledgerUnavailable = true;
          return null;
        })
      : null;
    const latestRequest = requests[requests.length - 1] as AdminPlanRequest | undefined;
    return {
      title: 'Dashboard',
      chart: history !== null || ledger !== null,
      email: request.account.email,
      consumerName: consumer.name,
      current: planStatement(consumer, billing),
      policies: policyCards(usage, billing, ledger, new Date()),
      billingPeriod: billing?.perMonth ? billing.currentPeriod : null,
      credits: billing?.credits ? creditsPanel(billing.credits, ledger) : null,
      ledgerUnavailable,
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
      keyTable: keyTable(consumer.keys, '/keys', true),
      canCreate: activeKeys(consumer) < MAX_ACTIVE_KEYS,
      maxKeys: MAX_ACTIVE_KEYS,
      latestRequest,
      mayAskForPlan: latestRequest?.status !== 'pending',
    };
  }

  /** Post/Redirect/Get: the new key is held in the session for the one page the redirect leads to. */
  @Post('keys')
  async createKey(@Req() request: SignedInRequest, @Res() response: Response): Promise<void> {
    const name = request.account.consumerName;
    const by = developerOf(request.account, request);
    if (activeKeys(await this.api.consumer(by, name)) >= MAX_ACTIVE_KEYS)
      return this.back(request, response, 'error', KEY_REFUSALS.KEY_LIMIT_REACHED!);
    try {
      const key = await this.api.issueKey(by, name);
      holdShownOnce(request, SHOWN_KEY, { secret: key.key });
    } catch (error) {
      if (error instanceof AdminApiError && error.status < 500)
        return this.back(request, response, 'error', refusalText(error, KEY_REFUSALS));
      throw error;
    }
    await redirectAfterSave(request, response, '/keys/new');
  }

  @Post('keys/:id/rotate')
  async rotate(
    @Param('id') id: string,
    @Body() body: Form,
    @Req() request: SignedInRequest,
    @Res() response: Response,
  ): Promise<void> {
    const overlap = rotationOverlap(str(body.overlap));
    if (!KEY_ID.test(id) || !overlap)
      return this.back(request, response, 'error', 'Choose how long the old key keeps working.');
    try {
      const { key, previous } = await this.api.rotateKey(
        developerOf(request.account, request),
        request.account.consumerName,
        id,
        overlap.seconds,
      );
      holdShownOnce(request, SHOWN_KEY, {
        secret: key.key,
        details: { rotated: { hint: previous.hint, expiresAt: previous.expiresAt } },
      });
    } catch (error) {
      if (error instanceof AdminApiError && error.status < 500)
        return this.back(request, response, 'error', refusalText(error, KEY_REFUSALS));
      throw error;
    }
    await redirectAfterSave(request, response, '/keys/new');
  }

  /** The key made by the last POST, once; a reload (or any later visit) says it was shown once. */
  @Get('keys/new')
  @Page('new-key')
  async newKey(@Req() request: SignedInRequest): Promise<NewKeyView> {
    const shown = takeShownOnce(request, SHOWN_KEY);
    if (shown) await saveSession(request);
    const by = developerOf(request.account, request);
    const [consumer, billing] = await Promise.all([
      this.api.consumer(by, request.account.consumerName),
      this.api.billing(by, request.account.consumerName),
    ]);
    const welcome = shown?.details?.welcome === true;
    return {
      title: shown ? (welcome ? 'Your API key' : 'Your new API key') : 'Key shown once',
      key: shown?.secret,
      welcome,
      rotated: shown?.details?.rotated as NewKeyView['rotated'],
      current: planStatement(consumer, billing),
    };
  }

  @Get('keys/:id/revoke')
  @Page('revoke')
  async confirmRevoke(@Param('id') id: string, @Req() request: SignedInRequest): Promise<RevokeView> {
    const key = KEY_ID.test(id)
      ? (await this.api.consumer(developerOf(request.account, request), request.account.consumerName)).keys.find(
          (k) => k.id === id,
        )
      : undefined;
    if (!key) throw new NotFoundException(KEY_REFUSALS.NOT_FOUND);
    return { title: 'Revoke a key', key: { id: key.id, hint: key.hint }, action: `/keys/${key.id}/revoke` };
  }

  @Post('keys/:id/revoke')
  async revoke(@Param('id') id: string, @Req() request: SignedInRequest, @Res() response: Response): Promise<void> {
    if (!KEY_ID.test(id)) return this.back(request, response, 'error', KEY_REFUSALS.NOT_FOUND!);
    try {
      await this.api.revokeKey(developerOf(request.account, request), request.account.consumerName, id);
    } catch (error) {
      if (error instanceof AdminApiError && error.status < 500)
        return this.back(request, response, 'error', refusalText(error, KEY_REFUSALS));
      throw error;
    }
    return this.back(request, response, 'success', 'The key is revoked: every gateway instance refuses it now.');
  }

  /** The plans the consumer is not on; while a request waits for its answer, that request instead of the form. */
  @Get('plan')
  @Page('plan')
  async planForm(@Req() request: SignedInRequest): Promise<PlanView> {
    return this.planPage(request);
  }

  @Post('plan')
  @HttpCode(200)
  async requestPlan(@Body() body: Form, @Req() request: SignedInRequest, @Res() response: Response): Promise<void> {
    const typed = { plan: str(body.plan), expectedVolume: str(body.expectedVolume), message: str(body.message) };
    const page = await this.planPage(request);
    if (page.pending) return renderView(response, 'plan', page, 409);
    const offered = page.plans.find((p) => p.value === typed.plan);
    const errors: PlanView['errors'] = {
      plan: offered ? undefined : 'Choose a plan.',
      expectedVolume:
        typed.expectedVolume.trim() === ''
          ? 'Say roughly how many requests you expect.'
          : typed.expectedVolume.length > EXPECTED_VOLUME_MAX
            ? `Use at most ${EXPECTED_VOLUME_MAX} characters.`
            : formTextError(typed.expectedVolume),
      message:
        typed.message.length > MESSAGE_MAX
          ? `Use at most ${MESSAGE_MAX} characters.`
          : formTextError(typed.message, { multiLine: true }),
    };
    if (!offered || errors.expectedVolume || errors.message)
      return renderView(response, 'plan', { ...page, typed, errors }, 400);
    try {
      await this.api.requestPlan(
        developerOf(request.account, request),
        request.account.consumerName,
        offered.value,
        typed.expectedVolume.trim(),
        typed.message,
      );
    } catch (error) {
      if (error instanceof AdminApiError && error.status < 500)
        return renderView(
          response,
          'plan',
          { ...page, typed, failed: refusalText(error, PLAN_REFUSALS) },
          error.status === 409 ? 409 : 400,
        );
      throw error;
    }
    return this.back(request, response, 'success', 'Your request was sent. Its answer will show on this page.');
  }

  private async planPage(request: SignedInRequest): Promise<PlanView> {
    const name = request.account.consumerName;
    const by = developerOf(request.account, request);
    const [consumer, requests, billing] = await Promise.all([
      this.api.consumer(by, name),
      this.api.planRequests(by, name),
      this.api.billing(by, name),
    ]);
    const pending = requests.find((r) => r.status === 'pending');
    return {
      title: 'Ask for another plan',
      current: planStatement(consumer, billing),
      pending,
      plans: pending ? [] : this.offers(consumer),
      maxVolume: EXPECTED_VOLUME_MAX,
      maxMessage: MESSAGE_MAX,
    };
  }

  /** Every plan of the catalogue (PLANS_FILE) but the consumer's own, described from the same catalogue. */
  private offers(consumer: AdminConsumer): PlanOffer[] {
    return PLAN_NAMES.filter((plan) => plan !== consumer.plan).map((plan) => ({
      value: plan,
      label: `${planTitle(plan)} (${describeLimits(this.plans[plan])})`,
    }));
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
