import { Body, Controller, Get, Param, Post, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { AdminRequestContext } from '../../access/admin-context';
import { AdminCall } from '../../access/admin-call.decorator';
import { AdminOperation } from '../../access/admin-operation.decorator';
import { ADMIN_TAG } from '../../admin-conventions/admin-tags';
import { AdminErrors, AdminExample, MALFORMED_BODY, notFound } from '../../admin-conventions/admin-responses';
import { ConsumerParams } from '../../consumers/admin/dto/consumer-params.dto';
import { CONSUMER_NAME_RULE } from '../../consumers/consumer-name';
import { BillingService } from '../billing.service';
import { CreditsAdminService } from './credits-admin.service';
import {
  LEDGER_DAYS_MAX,
  LedgerQueryDto,
  LedgerResponse,
  SetCreditsDto,
  SetCreditsResponse,
  TopUpDto,
  TopUpResponse,
  toLedgerEntryResponse,
  toLedgerResponse,
} from './dto/credits.dto';
import { ApiError } from '@app/errors';

const BAD_NAME: AdminExample = ['VALIDATION_FAILED', `name must be ${CONSUMER_NAME_RULE}`];
const BAD_REASON: AdminExample = ['VALIDATION_FAILED', 'reason must be 1 to 200 characters'];

/** A consumer's prepaid credits (docs/billing.md): top-ups, sets, the ledger. Thin: the rules are CreditsAdminService's. */
@ApiTags(ADMIN_TAG)
@ApiBearerAuth('bearer')
@Controller()
export class CreditsAdminController {
  constructor(
    private readonly credits: CreditsAdminService,
    private readonly billing: BillingService,
  ) {}

  @Post('consumers/:name/credits/top-ups')
  @AdminOperation({
    operationId: 'topUpConsumerCredits',
    summary: "Add credits to a consumer's balance",
    description:
      "Audited (`consumer.credits.top-up`), with a ledger entry. The first top-up puts credits in force for the consumer: from then on every request costs its operation's credits and is refused when the balance is short (docs/billing.md). 503 when the counter store holding the balances cannot be reached: nothing is changed.",
  })
  @ApiCreatedResponse({ type: TopUpResponse, description: 'The balance after the top-up, and its ledger entry.' })
  @AdminErrors({
    400: [['VALIDATION_FAILED', 'amount must be at least 1'], BAD_REASON, BAD_NAME, ...MALFORMED_BODY],
    404: notFound(),
  })
  async topUp(
    @AdminCall() call: AdminRequestContext,
    @Param() { name }: ConsumerParams,
    @Body() body: TopUpDto,
  ): Promise<TopUpResponse> {
    const { balance, entry } = await this.credits.topUp(call, name, body.amount, body.reason);
    return { balance, entry: toLedgerEntryResponse(entry) };
  }

  @Put('consumers/:name/credits')
  @AdminOperation({
    operationId: 'setConsumerCredits',
    summary: "Set a consumer's credit balance, or end its credits",
    description:
      'Audited (`consumer.credits.set`), with a ledger entry of the change. `balance: null` ends credits for the consumer (its requests are no longer charged); a number puts them in force.',
  })
  @ApiOkResponse({ type: SetCreditsResponse })
  @AdminErrors({
    400: [['VALIDATION_FAILED', 'balance must be at least 0'], BAD_REASON, BAD_NAME, ...MALFORMED_BODY],
    404: notFound(),
  })
  async set(
    @AdminCall() call: AdminRequestContext,
    @Param() { name }: ConsumerParams,
    @Body() body: SetCreditsDto,
  ): Promise<SetCreditsResponse> {
    return { balance: await this.credits.set(call, name, body.balance, body.reason) };
  }

  @Get('consumers/:name/credits/ledger')
  @AdminOperation({
    operationId: 'getConsumerCreditLedger',
    summary: "Read a consumer's credit ledger, its spend per day and when its balance runs out",
    description:
      'Top-ups, sets and refills of the last `days` UTC days (newest first), the credits spent on each of those days (oldest first), and the projected exhaustion at the mean spend of the last 7 days.',
  })
  @ApiOkResponse({ type: LedgerResponse })
  @AdminErrors({
    400: [['VALIDATION_FAILED', `days must be an integer from 1 to ${LEDGER_DAYS_MAX}`], BAD_NAME],
    404: notFound(),
  })
  async ledger(
    @AdminCall() call: AdminRequestContext,
    @Param() { name }: ConsumerParams,
    @Query() query: LedgerQueryDto,
  ): Promise<LedgerResponse> {
    const days = query.days === undefined ? 30 : Number(query.days);
    if (days > LEDGER_DAYS_MAX)
      throw new ApiError('VALIDATION_FAILED', `days must be an integer from 1 to ${LEDGER_DAYS_MAX}`);
    const state = await this.billing.get(call.actor, name);
    return toLedgerResponse(await this.credits.ledger(call.actor, name, days, state.credits));
  }
}
