import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { AdminRequestContext } from '../../access/admin-context';
import { PlanRequestsService } from '../plan-requests.service';
import { PLAN_NAMES } from '../../plans/plans';
import { AdminCall } from '../../access/admin-call.decorator';
import { ADMIN_TAG } from '../../admin-conventions/admin-tags';
import {
  AdminErrorResponse,
  AdminErrors,
  AdminExample,
  EXAMPLE_CONSUMER,
  EXAMPLE_KEY_ID,
  MALFORMED_BODY,
  notFound,
} from '../../admin-conventions/admin-responses';
import { CONSUMER_NAME_RULE } from '../../consumers/consumer-name';
import { PAGE_SIZE } from '../../admin-conventions/page-size';
import {
  ApprovePlanRequestDto,
  CreatePlanRequestDto,
  DeclinePlanRequestDto,
  ListPlanRequestsQueryDto,
  PlanRequestPageResponse,
  PlanRequestParams,
  PlanRequestResponse,
  toPlanRequestResponse,
} from './dto/plan-request.dto';
import { AdminOperation } from '../../access/admin-operation.decorator';

const BAD_ID: AdminExample = ['VALIDATION_FAILED', 'id must be a UUID'];
const NO_SUCH_REQUEST = `No plan request ${EXAMPLE_KEY_ID}.`;
const DECIDED_DESCRIPTION =
  'The request was already decided (`PLAN_REQUEST_DECIDED`): of two concurrent decisions, exactly one wins.';
const DECIDED: AdminExample[] = [
  ['PLAN_REQUEST_DECIDED', `Plan request ${EXAMPLE_KEY_ID} was already approved.`],
  ['PLAN_REQUEST_DECIDED', `Plan request ${EXAMPLE_KEY_ID} was already declined.`],
];

/** Plan requests (issue #25): the portal records them, an operator approves (the plan changes) or declines them. */
@ApiTags(ADMIN_TAG)
@ApiBearerAuth('bearer')
@Controller()
export class PlanRequestsAdminController {
  constructor(private readonly requests: PlanRequestsService) {}

  @Get('plan-requests')
  @AdminOperation({
    operationId: 'listPlanRequests',
    summary: 'List plan requests, a page at a time',
    description: 'Oldest first, filtered by status and consumer. Pass `next` as `after` for the next page.',
  })
  @ApiOkResponse({ type: PlanRequestPageResponse })
  @AdminErrors({
    400: [
      ['VALIDATION_FAILED', 'status must be one of pending, approved, declined'],
      ['VALIDATION_FAILED', `consumer must be ${CONSUMER_NAME_RULE}`],
      ['VALIDATION_FAILED', `limit must be an integer from ${PAGE_SIZE.min} to ${PAGE_SIZE.max}`],
      ['VALIDATION_FAILED', 'after must be the next of a previous page'],
    ],
  })
  async list(
    @AdminCall() call: AdminRequestContext,
    @Query() query: ListPlanRequestsQueryDto,
  ): Promise<PlanRequestPageResponse> {
    const page = await this.requests.list(call.actor, {
      status: query.status,
      consumer: query.consumer,
      limit: query.limit ?? PAGE_SIZE.default,
      after: query.after,
    });
    return { items: page.items.map(toPlanRequestResponse), next: page.next };
  }

  @Post('plan-requests')
  @AdminOperation({
    operationId: 'createPlanRequest',
    summary: 'Ask for another plan for a consumer',
    description: 'At most one pending request per consumer; an operator approves or declines it.',
  })
  @ApiCreatedResponse({ type: PlanRequestResponse, description: 'The request, pending.' })
  @AdminErrors({
    400: [
      ['VALIDATION_FAILED', `requestedPlan must be one of ${PLAN_NAMES.join(', ')}`],
      ['VALIDATION_FAILED', 'expectedVolume must be at most 200 characters'],
      ['VALIDATION_FAILED', 'message must be at most 2000 characters'],
      ...MALFORMED_BODY,
    ],
    404: notFound(),
    409: [
      ['PLAN_REQUEST_PENDING', `Consumer "${EXAMPLE_CONSUMER}" already has a pending plan request.`],
      ['PLAN_UNCHANGED', "requestedPlan must differ from the consumer's current plan (free)."],
    ],
  })
  async create(
    @AdminCall() call: AdminRequestContext,
    @Body() body: CreatePlanRequestDto,
  ): Promise<PlanRequestResponse> {
    return toPlanRequestResponse(await this.requests.create(call, { ...body, message: body.message ?? '' }));
  }

  @Post('plan-requests/:id/approve')
  @HttpCode(200)
  @AdminOperation({
    operationId: 'approvePlanRequest',
    summary: 'Approve a plan request: the consumer moves to the requested plan',
    description:
      'In one transaction with the plan change (audited as PATCH /consumers is, and applied by every instance at once). Custom limits (both) are required for Enterprise. The body is optional.',
  })
  @ApiBody({ type: ApprovePlanRequestDto, required: false })
  @ApiOkResponse({ type: PlanRequestResponse, description: 'The request, approved; the consumer is on its new plan.' })
  @AdminErrors({
    400: [
      BAD_ID,
      ['VALIDATION_FAILED', 'perDay is required with perMinute'],
      ['VALIDATION_FAILED', "The enterprise plan needs the consumer's agreed limits (perMinute and perDay)."],
      ...MALFORMED_BODY,
    ],
  })
  @AdminErrorResponse(404, 'No such plan request (`NOT_FOUND`).', [['NOT_FOUND', NO_SUCH_REQUEST]])
  @AdminErrorResponse(
    409,
    `${DECIDED_DESCRIPTION} Or the consumer is no longer on the plan the request was made from (\`PLAN_REQUEST_STALE\`: an operator moved it since); nothing changed.`,
    [
      ...DECIDED,
      [
        'PLAN_REQUEST_STALE',
        `Plan request ${EXAMPLE_KEY_ID} asked to move from free, but the consumer is on business now: decline it, or ask again.`,
      ],
    ],
  )
  async approve(
    @AdminCall() call: AdminRequestContext,
    @Param() { id }: PlanRequestParams,
    @Body() body: ApprovePlanRequestDto,
  ): Promise<PlanRequestResponse> {
    const limits =
      body.perMinute !== undefined && body.perDay !== undefined
        ? { perMinute: body.perMinute, perDay: body.perDay }
        : null;
    return toPlanRequestResponse(await this.requests.approve(call, id, limits));
  }

  @Post('plan-requests/:id/decline')
  @HttpCode(200)
  @AdminOperation({
    operationId: 'declinePlanRequest',
    summary: 'Decline a plan request with a note',
    description: 'The note is shown to the requester on the portal.',
  })
  @ApiOkResponse({ type: PlanRequestResponse, description: 'The request, declined.' })
  @AdminErrors({
    400: [
      BAD_ID,
      ['VALIDATION_FAILED', 'note must not be empty'],
      ['VALIDATION_FAILED', 'note must be at most 2000 characters'],
      ...MALFORMED_BODY,
    ],
  })
  @AdminErrorResponse(404, 'No such plan request (`NOT_FOUND`).', [['NOT_FOUND', NO_SUCH_REQUEST]])
  @AdminErrorResponse(409, DECIDED_DESCRIPTION, DECIDED)
  async decline(
    @AdminCall() call: AdminRequestContext,
    @Param() { id }: PlanRequestParams,
    @Body() body: DeclinePlanRequestDto,
  ): Promise<PlanRequestResponse> {
    return toPlanRequestResponse(await this.requests.decline(call, id, body.note));
  }
}
