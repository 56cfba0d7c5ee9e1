import { Body, Controller, Get, Param, Patch } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ApiError } from '@app/errors';
import { dateTimeOf, parseCreditRefill, parseOperationCosts } from '@app/contract';
import { BillingService, BillingState } from '../billing.service';
import { CreditsAdminService } from './credits-admin.service';
import { MonthQuotaCountService } from './month-quota-count.service';
import { AdminRequestContext } from '../../access/admin-context';
import { CONSUMER_NAME_RULE } from '../../consumers/consumer-name';
import { AdminCall } from '../../access/admin-call.decorator';
import { ADMIN_TAG } from '../../admin-conventions/admin-tags';
import { AdminErrors, AdminExample, MALFORMED_BODY, notFound } from '../../admin-conventions/admin-responses';
import { BillingResponse, toBillingResponse, UpdateBillingDto } from './dto/billing.dto';
import { alertSettingsOf } from '../../plans/alert-thresholds';
import { ConsumerParams } from '../../consumers/admin/dto/consumer-params.dto';
import { AdminOperation } from '../../access/admin-operation.decorator';

const BAD_NAME: AdminExample = ['VALIDATION_FAILED', `name must be ${CONSUMER_NAME_RULE}`];
const NOTHING_TO_CHANGE = 'Give billingAnchor, perMonth, creditRefill, costs or alerts.';

/** A consumer's billing anchor and monthly quota (docs/billing.md). Thin: the rules are BillingService's. */
@ApiTags(ADMIN_TAG)
@ApiBearerAuth('bearer')
@Controller()
export class BillingAdminController {
  constructor(
    private readonly billing: BillingService,
    private readonly credits: CreditsAdminService,
    private readonly monthCount: MonthQuotaCountService,
  ) {}

  private async respond(state: BillingState): Promise<BillingResponse> {
    return toBillingResponse(
      state,
      await this.credits.view(state.consumer, state.credits, state.billingAnchor.getTime()),
    );
  }

  @Get('consumers/:name/billing')
  @AdminOperation({
    operationId: 'getConsumerBilling',
    summary: "Read a consumer's billing anchor, monthly quota and current billing period",
    description: 'The counts of the period are in the usage (`GET /consumers/{name}/usage`, window `month`).',
  })
  @ApiOkResponse({ type: BillingResponse })
  @AdminErrors({ 400: [BAD_NAME], 404: notFound() })
  async get(@AdminCall() call: AdminRequestContext, @Param() { name }: ConsumerParams): Promise<BillingResponse> {
    return this.respond(await this.billing.get(call.actor, name));
  }

  @Patch('consumers/:name/billing')
  @AdminOperation({
    operationId: 'updateConsumerBilling',
    summary:
      "Move a consumer's billing anchor, set its own monthly quota, credit refill, operation costs or alert thresholds",
    description:
      "Audited (`consumer.billing`). Moving the anchor never resets a count nor grants a credit refill: the period in progress keeps its start and what it has used, and now ends at the new anchor's next reset (docs/billing.md); the audit row says so (`billingPeriod`). A refill or costs of its own replace its plan's (null: back to the plan's); they change nothing of the balance. Alert thresholds of its own replace its plan's for its next crossings (docs/alerts.md). Every instance applies the change at once.",
  })
  @ApiOkResponse({ type: BillingResponse })
  @AdminErrors({
    400: [
      ['VALIDATION_FAILED', NOTHING_TO_CHANGE],
      ['VALIDATION_FAILED', 'billingAnchor must be an ISO 8601 date-time'],
      ['VALIDATION_FAILED', 'perMonth must be at least 1'],
      ['VALIDATION_FAILED', 'creditRefill: a refill must be {"amount": 1..1000000000, "every": "day" | "month"}'],
      ['VALIDATION_FAILED', 'costs: unknown operation "deletePet" (one of listPets, createPet, getPet)'],
      ['VALIDATION_FAILED', 'alerts.thresholdsPercent must be in ascending order without repeats'],
      BAD_NAME,
      ...MALFORMED_BODY,
    ],
    404: notFound(),
  })
  async update(
    @AdminCall() call: AdminRequestContext,
    @Param() { name }: ConsumerParams,
    @Body() body: UpdateBillingDto,
  ): Promise<BillingResponse> {
    if (
      body.billingAnchor === undefined &&
      body.perMonth === undefined &&
      body.creditRefill === undefined &&
      body.costs === undefined &&
      body.alerts === undefined
    )
      throw new ApiError('VALIDATION_FAILED', NOTHING_TO_CHANGE);
    const billingAnchor =
      body.billingAnchor === undefined
        ? undefined
        : body.billingAnchor === null
          ? null
          : dateTimeOf(body.billingAnchor);
    const creditRefill = body.creditRefill == null ? body.creditRefill : parseCreditRefill(body.creditRefill);
    if (typeof creditRefill === 'string') throw new ApiError('VALIDATION_FAILED', `creditRefill: ${creditRefill}`);
    const costs = body.costs == null ? body.costs : parseOperationCosts(body.costs);
    if (typeof costs === 'string') throw new ApiError('VALIDATION_FAILED', costs);
    const state = await this.billing.update(call, name, {
      billingAnchor,
      perMonth: body.perMonth,
      creditRefill,
      costs,
      alerts: body.alerts === undefined ? undefined : alertSettingsOf(body.alerts),
    });
    // A quota set or changed mid-period counts what the period already used, never from now (docs/billing.md).
    if (body.perMonth !== undefined) await this.monthCount.countPeriodSoFar(state);
    return this.respond(state);
  }
}
