import { PLAN_NAMES, describeLimits, planTitle, rotationOverlap } from '@app/contract';
import type { PlanCatalogue } from '@app/contract';
import {
  AdminApi,
  AdminApiError,
  creditsPanel,
  holdShownOnce,
  keyTable,
  PLAN_CATALOGUE,
  planStatement,
  policyCards,
  redirectAfterSave,
  refusalText,
  rethrowUnlessRefusal,
  saveSession,
  setFlash,
  takeShownOnce,
  usageTable,
} from '@app/web';
import { Body, Controller, Get, Inject, NotFoundException, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { act, field, limitsFrom, segment } from '../actions';
import { actorOf } from '../audit/audit-row';
import { describeChanges } from '../audit/describe-changes';
import { abilitiesOfRequest, endUserOf, tokenOf } from '../auth/operator';
import { ConfirmView, ConsumersView, ConsumerView, NewKeyView, Page, renderView } from '../console.views';
import { daysAgo, isUnavailable, section } from '../sections';
import {
  alertsText,
  anchorText,
  BILLING_REFUSALS,
  BillingFormName,
  BillingChange,
  BillingFormState,
  Parsed,
  parseAlerts,
  parseAnchor,
  parseBalance,
  parseCosts,
  parseQuota,
  parseRefill,
  parseTopUp,
  typedFields,
} from './billing-forms';
import { addressListText } from './credential-forms';
import type { AdminBilling, AdminCalls, AdminConsumer, RefusalSentences } from '@app/web';

/** The session's one-time secret of the new-key page (holdShownOnce/takeShownOnce). */
const SHOWN_KEY = 'console.key';

/** What the plan form says when the admin API refuses it (chosen by code). */
const PLAN_FORM_REFUSALS: RefusalSentences = {
  VALIDATION_FAILED:
    "These limits were not accepted: give both as whole numbers of at least 1 (at most 1,000,000,000), or leave both empty for the plan's.",
  FORBIDDEN: 'Your token may not put this consumer on this plan or give it these limits.',
};

const PAGE = 50;

/** What the search box says when the admin API refuses the search (its VALIDATION_FAILED, never its message). */
const SEARCH_REFUSALS = {
  email: 'Type a whole email address, such as name@example.com (no spaces).',
  prefix:
    'Type the start of a name (letters, digits, ".", "_" or "-", starting with a letter or digit), or an email address.',
};

/** What the key actions say when refused (chosen by code; the rest: libs/web's REFUSALS). */
const KEY_REFUSALS: RefusalSentences = {
  VALIDATION_FAILED: 'Choose how long the old key keeps working.',
  NOT_FOUND: 'No such key of this consumer.',
};

/** Consumers: search by name prefix, a consumer's page, and every change an operator makes to one. */
@Controller('consumers')
export class ConsumersController {
  constructor(
    private readonly admin: AdminApi,
    @Inject(PLAN_CATALOGUE) private readonly plans: PlanCatalogue,
  ) {}

  @Get()
  @Page('consumers')
  async list(@Req() request: Request, @Query('q') q?: string, @Query('after') after?: string): Promise<ConsumersView> {
    const search = typeof q === 'string' ? q.trim() : '';
    // An address has an "@" and a name cannot: one box for both, each sent as the admin API's own filter.
    const byEmail = search.includes('@');
    let searchError: string | undefined;
    const page = await section(async () => {
      try {
        return await this.admin.as(tokenOf(request)).GET('/consumers', {
          params: {
            query: { ...(search === '' ? {} : byEmail ? { email: search } : { prefix: search }), after, limit: PAGE },
          },
        });
      } catch (error) {
        // A search the admin API did not accept is the operator's typing: said next to the box, chosen by code.
        if (!(error instanceof AdminApiError) || error.code !== 'VALIDATION_FAILED' || search === '') throw error;
        searchError = byEmail ? SEARCH_REFUSALS.email : SEARCH_REFUSALS.prefix;
        return { items: [], next: null };
      }
    });
    const view: ConsumersView = {
      title: 'Consumers',
      search,
      byEmail,
      searchError,
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
    return view;
  }

  @Get(':name')
  @Page('consumer')
  show(@Req() request: Request, @Param('name') name: string): Promise<ConsumerView> {
    return this.consumerPage(request, name);
  }

  /** The consumer page's model; `planForm` re-shows the plan form as it was typed, with the API's refusal. */
  private async consumerPage(
    request: Request,
    name: string,
    planForm?: { plan: string; perMinute: string; perDay: string; error: string },
    billingForm?: BillingFormState,
  ): Promise<ConsumerView> {
    const admin = this.admin.as(tokenOf(request));
    const path = { name };
    const consumer = await admin.GET('/consumers/{name}', { params: { path } }).catch((error: unknown) => {
      if (error instanceof AdminApiError && error.code === 'NOT_FOUND')
        throw new NotFoundException(`No consumer named "${name}".`);
      throw error;
    });
    const can = abilitiesOfRequest(request);
    const [usage, history, audit, billing, bindings] = await Promise.all([
      section(() => admin.GET('/consumers/{name}/usage', { params: { path } }), can.usageRead),
      section(
        () =>
          admin.GET('/consumers/{name}/usage/history', {
            params: { path, query: { granularity: 'day', from: daysAgo(29) } },
          }),
        can.usageRead,
      ),
      section(
        () => admin.GET('/audit', { params: { query: { target: name, order: 'desc', limit: 50 } } }),
        can.auditRead,
      ),
      section(() => this.billingOf(admin, name)),
      section(() => admin.GET('/consumers/{name}/client-bindings', { params: { path } })),
    ]);
    const consumerPath = `/consumers/${segment(consumer.name)}`;
    // The ledger only where credits are in force (a consumer without credits has none to show).
    const credits = isUnavailable(billing) || !billing.credits ? null : billing.credits;
    const ledger =
      credits === null
        ? null
        : await section(() => admin.GET('/consumers/{name}/credits/ledger', { params: { path, query: { days: 30 } } }));
    const ownAlerts = alertsText(isUnavailable(billing) ? null : billing.alerts);
    const typed = (form: BillingFormName, name: string, current: string): string =>
      billingForm?.form === form ? (billingForm.typed[name] ?? '') : current;
    return {
      title: consumer.name,
      chart: true,
      consumer,
      current: planStatement(consumer),
      path: `/consumers/${segment(consumer.name)}`,
      billing,
      credits:
        credits === null
          ? null
          : ledger !== null && isUnavailable(ledger)
            ? { ...creditsPanel(credits, null), ledgerUnavailable: ledger }
            : creditsPanel(credits, ledger),
      billingForms: {
        error: billingForm ? { [billingForm.form]: billingForm.error } : {},
        anchor: typed(
          'anchor',
          'anchor',
          isUnavailable(billing) || !billing.anchorSet ? '' : anchorText(billing.billingAnchor),
        ),
        perMonth: typed('quota', 'perMonth', isUnavailable(billing) ? '' : String(billing.ownPerMonth ?? '')),
        alerts: {
          thresholdsPercent: typed('alerts', 'thresholdsPercent', ownAlerts.thresholdsPercent),
          creditsLowBalance: typed('alerts', 'creditsLowBalance', ownAlerts.creditsLowBalance),
        },
        topUp: { amount: typed('top-up', 'amount', ''), reason: typed('top-up', 'reason', '') },
        balance: { balance: typed('balance', 'balance', ''), reason: typed('balance', 'reason', '') },
        refill: {
          amount: typed('refill', 'amount', credits?.refillSet && credits.refill ? String(credits.refill.amount) : ''),
          every: typed('refill', 'every', credits?.refillSet && credits.refill ? credits.refill.every : ''),
        },
        costs: Object.entries(credits?.costs ?? {})
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([operation, cost]) => ({ operation, value: typed('costs', `cost-${operation}`, String(cost)) })),
      },
      plans: PLAN_NAMES.map((plan) => ({
        value: plan,
        label: `${planTitle(plan)} (${this.plans[plan] === 'custom' ? 'its own limits' : describeLimits(this.plans[plan])})`,
        selected: plan === (planForm?.plan ?? consumer.plan),
      })),
      planForm: planForm ?? { perMinute: consumer.limits?.perMinute ?? '', perDay: consumer.limits?.perDay ?? '' },
      keyTable: keyTable(consumer.keys, `/consumers/${segment(consumer.name)}/keys`, can.keysWrite),
      allowedAddresses: {
        consumer: addressListText(consumer.allowedAddresses),
        // The active keys: a revoked or expired one is used from nowhere.
        keys: consumer.keys
          .filter((key) => key.state === 'active')
          .map((key) => ({
            id: key.id,
            hint: key.hint,
            ranges: addressListText(key.allowedAddresses),
            action: `${consumerPath}/keys/${segment(key.id)}/allowed-addresses`,
          })),
      },
      bindings: isUnavailable(bindings)
        ? bindings
        : bindings.map((binding) => ({
            ...binding,
            ranges: addressListText(binding.allowedAddresses),
            unbindAction: `${consumerPath}/client-bindings/${segment(binding.id)}/unbind`,
          })),
      usage,
      // The portal's policy cards, windows only: one reset instant for both apps (the month's is the period's end).
      windows: isUnavailable(usage)
        ? []
        : policyCards(usage, isUnavailable(billing) ? null : billing, null, new Date()).filter(
            (card) => card.name !== 'credits',
          ),
      history: isUnavailable(history)
        ? history
        : usageTable(`${consumer.name}: requests by outcome, last 30 days (daily, UTC)`, 'day', history.buckets),
      audit: isUnavailable(audit)
        ? audit
        : audit.items.map((entry) => ({ ...entry, summary: describeChanges(entry.changes), actor: actorOf(entry) })),
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
    // The page's own check first, from the catalogue: a plan without limits of its own needs the consumer's.
    const plan = PLAN_NAMES.find((known) => known === typed.plan);
    const refused =
      plan === undefined
        ? 'Choose a plan.'
        : this.plans[plan] === 'custom' && limits === null
          ? `${planTitle(plan)} has no limits of its own: give both limits.`
          : undefined;
    let updated: AdminConsumer | undefined;
    let error = refused;
    if (!refused) {
      try {
        updated = await this.admin
          .as(tokenOf(request), endUserOf(request))
          .PATCH('/consumers/{name}', { params: { path: { name } }, body: { plan, limits } });
      } catch (caught) {
        rethrowUnlessRefusal(caught);
        error = refusalText(caught, PLAN_FORM_REFUSALS);
      }
    }
    if (!updated) {
      // Refused: the page again, the form as typed, the refusal next to it (no redirect).
      const page = await this.consumerPage(request, name, { ...typed, error: error! });
      return renderView(response, 'consumer', page, 400);
    }
    const statement = planStatement(updated);
    setFlash(request, 'success', `Saved: ${updated.name} is on the ${statement.plan} plan (${statement.limits}).`);
    await redirectAfterSave(request, response, `/consumers/${segment(name)}`);
  }

  @Post(':name/disable')
  disable(@Req() request: Request, @Res() response: Response, @Param('name') name: string): Promise<void> {
    return act(request, response, `/consumers/${segment(name)}`, async () => {
      await this.admin
        .as(tokenOf(request), endUserOf(request))
        .POST('/consumers/{name}/disable', { params: { path: { name } } });
      return `${name} is disabled: its keys are refused until it is enabled again.`;
    });
  }

  @Post(':name/enable')
  enable(@Req() request: Request, @Res() response: Response, @Param('name') name: string): Promise<void> {
    return act(request, response, `/consumers/${segment(name)}`, async () => {
      await this.admin
        .as(tokenOf(request), endUserOf(request))
        .POST('/consumers/{name}/enable', { params: { path: { name } } });
      return `${name} is enabled.`;
    });
  }

  @Post(':name/unban')
  unban(@Req() request: Request, @Res() response: Response, @Param('name') name: string): Promise<void> {
    return act(request, response, `/consumers/${segment(name)}`, async () => {
      await this.admin
        .as(tokenOf(request), endUserOf(request))
        .POST('/consumers/{name}/unban', { params: { path: { name } } });
      return `${name} is no longer banned.`;
    });
  }

  @Post(':name/billing/anchor')
  saveAnchor(@Req() request: Request, @Res() response: Response, @Param('name') name: string, @Body() body: unknown) {
    return this.changeBilling(request, response, name, 'anchor', body, parseAnchor(field(body, 'anchor')), (b) =>
      b.anchorSet
        ? `Saved: ${name}'s billing months now reset on the anchor ${anchorText(b.billingAnchor)} UTC; this period ends ${anchorText(b.currentPeriod.end)} UTC.`
        : `Saved: ${name}'s billing anchor is its creation time again; this period ends ${anchorText(b.currentPeriod.end)} UTC.`,
    );
  }

  @Post(':name/billing/quota')
  saveQuota(@Req() request: Request, @Res() response: Response, @Param('name') name: string, @Body() body: unknown) {
    return this.changeBilling(request, response, name, 'quota', body, parseQuota(field(body, 'perMonth')), (b) =>
      b.perMonth === null
        ? `Saved: ${name} has no monthly quota.`
        : `Saved: ${name} is held to ${b.perMonth.toLocaleString('en-US')} requests a billing month${b.ownPerMonth === null ? " (the plan's)" : ''}.`,
    );
  }

  @Post(':name/billing/alerts')
  saveAlerts(@Req() request: Request, @Res() response: Response, @Param('name') name: string, @Body() body: unknown) {
    return this.changeBilling(request, response, name, 'alerts', body, parseAlerts(body), (b) => {
      if (b.alerts === null) return `Saved: ${name}'s alerts follow its plan's thresholds.`;
      const { thresholdsPercent, creditsLowBalance } = alertsText(b.alerts);
      return `Saved: ${name}'s alerts at ${thresholdsPercent ? `${thresholdsPercent} %` : "its plan's percents"}, credits low at ${creditsLowBalance || "its plan's balance"}.`;
    });
  }

  @Post(':name/credits/refill')
  saveRefill(@Req() request: Request, @Res() response: Response, @Param('name') name: string, @Body() body: unknown) {
    return this.changeBilling(request, response, name, 'refill', body, parseRefill(body), (b) =>
      b.credits?.refill
        ? `Saved: ${name} is refilled up to ${b.credits.refill.amount.toLocaleString('en-US')} credits every ${b.credits.refill.every === 'day' ? 'day (UTC)' : 'billing month'}.`
        : `Saved: ${name} gets no refill.`,
    );
  }

  @Post(':name/credits/costs')
  async saveCosts(
    @Req() request: Request,
    @Res() response: Response,
    @Param('name') name: string,
    @Body() body: unknown,
  ) {
    const billing = await this.billingOf(this.admin.as(tokenOf(request)), name);
    const parsed = parseCosts(body, Object.keys(billing.credits?.costs ?? {}));
    return this.changeBilling(request, response, name, 'costs', body, parsed, () =>
      'body' in parsed && parsed.body.costs === null
        ? `Saved: ${name} pays the plan's costs.`
        : `Saved: ${name}'s costs.`,
    );
  }

  @Post(':name/credits/top-up')
  topUp(@Req() request: Request, @Res() response: Response, @Param('name') name: string, @Body() body: unknown) {
    return this.changeCredits(request, response, name, 'top-up', body, parseTopUp(body), (admin, change) =>
      admin.POST('/consumers/{name}/credits/top-ups', { params: { path: { name } }, body: change }),
    );
  }

  @Post(':name/credits/balance')
  setBalance(@Req() request: Request, @Res() response: Response, @Param('name') name: string, @Body() body: unknown) {
    return this.changeCredits(request, response, name, 'balance', body, parseBalance(body), (admin, change) =>
      admin.PUT('/consumers/{name}/credits', { params: { path: { name } }, body: change }),
    );
  }

  /** GET billing (the anchor, the monthly quota, the current period, the credits). */
  private billingOf(admin: AdminCalls, name: string): Promise<AdminBilling> {
    return admin.GET('/consumers/{name}/billing', { params: { path: { name } } });
  }

  /** PATCH billing with a parsed form; a refusal (the page's or the API's, by code) shows the page again, 400. */
  private async changeBilling(
    request: Request,
    response: Response,
    name: string,
    form: BillingFormName,
    body: unknown,
    parsed: Parsed<BillingChange>,
    saved: (billing: AdminBilling) => string,
  ): Promise<void> {
    return this.change(request, response, name, form, body, parsed, async (change) =>
      saved(
        await this.admin
          .as(tokenOf(request), endUserOf(request))
          .PATCH('/consumers/{name}/billing', { params: { path: { name } }, body: change }),
      ),
    );
  }

  /** A top-up (POST) or a set balance (PUT) with a parsed form; the flash says the balance the API answered. */
  private async changeCredits<Change extends object>(
    request: Request,
    response: Response,
    name: string,
    form: BillingFormName,
    body: unknown,
    parsed: Parsed<Change>,
    send: (admin: AdminCalls, change: Change) => Promise<{ balance: number | null }>,
  ): Promise<void> {
    return this.change(request, response, name, form, body, parsed, async (change) => {
      const answer = await send(this.admin.as(tokenOf(request), endUserOf(request)), change);
      return answer.balance === null
        ? `Saved: ${name} no longer uses credits.`
        : `Saved: ${name}'s balance is ${answer.balance.toLocaleString('en-US')} credits.`;
    });
  }

  private async change<Change extends object>(
    request: Request,
    response: Response,
    name: string,
    form: BillingFormName,
    body: unknown,
    parsed: Parsed<Change>,
    send: (change: Change) => Promise<string>,
  ): Promise<void> {
    let error = 'error' in parsed ? parsed.error : undefined;
    if ('body' in parsed) {
      try {
        setFlash(request, 'success', await send(parsed.body));
        return redirectAfterSave(request, response, `/consumers/${segment(name)}`);
      } catch (caught) {
        rethrowUnlessRefusal(caught);
        error = refusalText(caught, BILLING_REFUSALS);
      }
    }
    const page = await this.consumerPage(request, name, undefined, { form, typed: typedFields(body), error: error! });
    return renderView(response, 'consumer', page, 400);
  }

  /** Post/Redirect/Get: the new key is held in the session for the one page the redirect leads to. */
  @Post(':name/keys')
  issue(@Req() request: Request, @Res() response: Response, @Param('name') name: string): Promise<void> {
    return this.showKeyOnce(request, response, name, async () => {
      const key = await this.admin
        .as(tokenOf(request), endUserOf(request))
        .POST('/consumers/{name}/keys', { params: { path: { name } }, body: {} });
      return { secret: key.key };
    });
  }

  @Post(':name/keys/:keyId/rotate')
  rotate(
    @Req() request: Request,
    @Res() response: Response,
    @Param('name') name: string,
    @Param('keyId') keyId: string,
    @Body() body: unknown,
  ): Promise<void> {
    const overlap = rotationOverlap(field(body, 'overlap'));
    return this.showKeyOnce(request, response, name, async () => {
      if (!overlap) throw new AdminApiError(400, 'VALIDATION_FAILED', 'no overlap chosen');
      const rotated = await this.admin
        .as(tokenOf(request), endUserOf(request))
        .POST('/consumers/{name}/keys/{keyId}/rotate', {
          params: { path: { name, keyId } },
          body: { overlapSeconds: overlap.seconds },
        });
      return {
        secret: rotated.key.key,
        details: { previous: { hint: rotated.previous.hint, expiresAt: rotated.previous.expiresAt } },
      };
    });
  }

  /** The key made by the last POST, once; a reload says it was shown once. */
  @Get(':name/keys/new')
  @Page('new-key')
  async newKey(@Req() request: Request, @Param('name') name: string): Promise<NewKeyView> {
    const shown = takeShownOnce(request, SHOWN_KEY);
    if (shown) await saveSession(request);
    return {
      title: shown ? 'New key' : 'Key shown once',
      heading: shown ? `New key for ${name}` : `Key of ${name} shown once`,
      name,
      path: `/consumers/${segment(name)}`,
      key: shown?.secret,
      previous: shown?.details?.previous as NewKeyView['previous'],
    };
  }

  /** Makes a key (issue, rotate), holds it for the new-key page and goes there; a refusal goes back to the consumer. */
  private async showKeyOnce(
    request: Request,
    response: Response,
    name: string,
    make: () => Promise<{ secret: string; details?: Record<string, unknown> }>,
  ): Promise<void> {
    try {
      holdShownOnce(request, SHOWN_KEY, await make());
    } catch (error) {
      rethrowUnlessRefusal(error);
      setFlash(request, 'error', refusalText(error, KEY_REFUSALS));
      return redirectAfterSave(request, response, `/consumers/${segment(name)}`);
    }
    await redirectAfterSave(request, response, `/consumers/${segment(name)}/keys/new`);
  }

  @Get(':name/keys/:keyId/revoke')
  @Page('confirm')
  async confirmRevoke(
    @Req() request: Request,
    @Param('name') name: string,
    @Param('keyId') keyId: string,
  ): Promise<ConfirmView> {
    const consumer = await this.admin.as(tokenOf(request)).GET('/consumers/{name}', { params: { path: { name } } });
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
    return act(
      request,
      response,
      `/consumers/${segment(name)}`,
      async () => {
        const keys = await this.admin
          .as(tokenOf(request), endUserOf(request))
          .POST('/consumers/{name}/keys/{keyId}/revoke', { params: { path: { name, keyId } } });
        return `Key ${keys.map((k) => k.hint).join(', ')} is revoked.`;
      },
      KEY_REFUSALS,
    );
  }
}
