import { planTitle } from '@app/contract';
import { AdminApi, formTextError } from '@app/web';
import { Body, Controller, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { act, field, limitsFrom, segment } from '../actions';
import { personOf } from '../audit/audit-row';
import { endUserOf, tokenOf } from '../auth/operator';
import { Page, PlanRequestsView, renderView } from '../console.views';
import type { AdminPlanRequest, RefusalSentences } from '@app/web';

const STATUSES: ReadonlyArray<AdminPlanRequest['status']> = ['pending', 'approved', 'declined'];

/** What approving or declining says when refused (chosen by code; the rest: libs/web's REFUSALS). */
const DECISION_REFUSALS: RefusalSentences = {
  VALIDATION_FAILED:
    'Not accepted: give both limits as whole numbers of at least 1, or neither; a decline needs a note.',
  NOT_FOUND: 'No such plan request.',
  FORBIDDEN: 'Your token may not decide this request.',
};

/** Upgrade requests from the portal: approve (the plan changes, audited) or decline with a note the requester sees. */
@Controller('plan-requests')
export class PlanRequestsController {
  constructor(private readonly admin: AdminApi) {}

  @Get()
  @Page('plan-requests')
  async list(
    @Req() request: Request,
    @Query('status') statusParam?: string,
    @Query('after') after?: string,
  ): Promise<PlanRequestsView> {
    const status = STATUSES.find((value) => value === statusParam) ?? 'pending';
    const page = await this.admin
      .as(tokenOf(request))
      .GET('/plan-requests', { params: { query: { status, after, limit: 50 } } });
    return {
      title: 'Plan requests',
      statuses: STATUSES.map((value) => ({ value, selected: value === status })),
      status,
      items: page.items.map((r) => ({
        ...r,
        pending: r.status === 'pending',
        requester: personOf(r.requestedBy),
        consumerHref: `/consumers/${segment(r.consumer)}`,
        path: `/plan-requests/${segment(r.id)}`,
      })),
      next:
        page.next === null ? null : `/plan-requests?${new URLSearchParams({ status, after: page.next }).toString()}`,
    };
  }

  @Post(':id/approve')
  approve(
    @Req() request: Request,
    @Res() response: Response,
    @Param('id') id: string,
    @Body() body: unknown,
  ): Promise<void> {
    // No limits typed: the body is empty and the requested plan's own limits apply.
    const limits = limitsFrom(body) ?? {};
    return act(
      request,
      response,
      '/plan-requests',
      async () => {
        const decided = await this.admin
          .as(tokenOf(request), endUserOf(request))
          .POST('/plan-requests/{id}/approve', { params: { path: { id } }, body: limits });
        return `Approved: ${decided.consumer} is now on the ${planTitle(decided.requestedPlan)} plan.`;
      },
      DECISION_REFUSALS,
    );
  }

  @Post(':id/decline')
  async decline(
    @Req() request: Request,
    @Res() response: Response,
    @Param('id') id: string,
    @Body() body: unknown,
  ): Promise<void> {
    // The house's rule for text (libs/contract), said beside the note; the page again with what was typed.
    const note = field(body, 'note');
    const error = formTextError(note, { multiLine: true });
    if (error) {
      const page = await this.list(request);
      const items = page.items.map((item) =>
        item.id === id ? { ...item, declineError: error, typedNote: note } : item,
      );
      renderView(response, 'plan-requests', { ...page, items }, 400);
      return;
    }
    return act(
      request,
      response,
      '/plan-requests',
      async () => {
        const decided = await this.admin
          .as(tokenOf(request), endUserOf(request))
          .POST('/plan-requests/{id}/decline', { params: { path: { id } }, body: { note } });
        return `Declined the request of ${decided.consumer}; the note is on their portal.`;
      },
      DECISION_REFUSALS,
    );
  }
}
