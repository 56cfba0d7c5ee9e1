import { Body, Controller, Get, Param, Patch } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ApiError } from '@app/errors';
import { BillingService } from '../billing.service';
import { AdminRequestContext } from '../../access/admin-context';
import { CONSUMER_NAME_RULE } from '../../consumers/consumer-name';
import { AdminCall } from '../../access/admin-call.decorator';
import { ADMIN_TAG } from '../../admin/shared/admin-tags';
import { AdminErrors, AdminExample, MALFORMED_BODY, notFound } from '../../admin/shared/admin-responses';
import { BillingResponse, toBillingResponse, UpdateBillingDto } from './dto/billing.dto';
import { ConsumerParams } from '../../admin/shared/consumer-params.dto';
import { AdminOperation } from '../../access/admin-operation.decorator';

const BAD_NAME: AdminExample = ['VALIDATION_FAILED', `name must be ${CONSUMER_NAME_RULE}`];
const NOTHING_TO_CHANGE = 'Give billingAnchor or perMonth (or both).';

/** A consumer's billing anchor and monthly quota (docs/billing.md). Thin: the rules are BillingService's. */
@ApiTags(ADMIN_TAG)
@ApiBearerAuth('bearer')
@Controller()
export class BillingAdminController {
  constructor(private readonly billing: BillingService) {}

  @Get('consumers/:name/billing')
  @AdminOperation({
    operationId: 'getConsumerBilling',
    summary: "Read a consumer's billing anchor, monthly quota and current billing period",
    description: 'The counts of the period are in the usage (`GET /consumers/{name}/usage`, window `month`).',
  })
  @ApiOkResponse({ type: BillingResponse })
  @AdminErrors({ 400: [BAD_NAME], 404: notFound() })
  async get(@AdminCall() call: AdminRequestContext, @Param() { name }: ConsumerParams): Promise<BillingResponse> {
    return toBillingResponse(await this.billing.get(call.actor, name));
  }

  @Patch('consumers/:name/billing')
  @AdminOperation({
    operationId: 'updateConsumerBilling',
    summary: "Move a consumer's billing anchor or set its own monthly quota",
    description:
      "Audited (`consumer.billing`). Moving the anchor never resets a count: the period in progress keeps what it has used and now ends at the new anchor's next reset (docs/billing.md). Every instance applies the change at once.",
  })
  @ApiOkResponse({ type: BillingResponse })
  @AdminErrors({
    400: [
      ['VALIDATION_FAILED', NOTHING_TO_CHANGE],
      ['VALIDATION_FAILED', 'billingAnchor must be an ISO 8601 date-time'],
      ['VALIDATION_FAILED', 'perMonth must be at least 1'],
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
    if (body.billingAnchor === undefined && body.perMonth === undefined)
      throw new ApiError('VALIDATION_FAILED', NOTHING_TO_CHANGE);
    const billingAnchor =
      body.billingAnchor === undefined ? undefined : body.billingAnchor === null ? null : new Date(body.billingAnchor);
    return toBillingResponse(await this.billing.update(call, name, { billingAnchor, perMonth: body.perMonth }));
  }
}
