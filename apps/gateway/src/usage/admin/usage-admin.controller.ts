import { Controller, Get, Inject, Param, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Clock } from '../../clock';
import { GATEWAY_CONFIG, GatewayConfig } from '../../config/gateway.config';
import { AdminRequestContext } from '../../access/admin-context';
import { ConsumersService } from '../../consumers/consumers.service';
import { USAGE_RANGE, resolveRange, resolveTopRange } from '../usage-range';
import { UsageHistoryService } from '../usage-history.service';
import { ExportRow } from '../usage.repository';
import { EXPORTS_BUSY_MESSAGE, ExportEnded, UsageExports } from '../usage-exports';
import { AdminCall } from '../../access/admin-call.decorator';
import { ADMIN_TAG } from '../../admin-conventions/admin-tags';
import { AdminErrors, AdminExample, EXAMPLE_CONSUMER, notFound } from '../../admin-conventions/admin-responses';
import { AdminOperation } from '../../access/admin-operation.decorator';
import { CONSUMER_NAME_RULE } from '../../consumers/consumer-name';
import { ConsumerParams } from '../../consumers/admin/dto/consumer-params.dto';
import {
  TOP_BY,
  TOP_LIMIT,
  UsageExportQueryDto,
  UsageHistoryQueryDto,
  UsageHistoryResponse,
  UsageTopQueryDto,
  UsageTopResponse,
  toCountsResponse,
} from './dto/usage-history.dto';

/** The CSV export's columns, in order (its header line). */
const USAGE_CSV_HEADER = 'consumer,start,requests,ok,client_errors,server_errors,rate_limited';
const CSV_COLUMNS: ReadonlyArray<keyof ExportRow> = [
  'requests',
  'ok',
  'client_errors',
  'server_errors',
  'rate_limited',
];

/** The 400s of the range every usage route takes. */
const BAD_RANGE: AdminExample[] = [
  ['VALIDATION_FAILED', 'from must be an ISO 8601 date-time with Z or an offset (2026-11-01T00:00:00Z), or a date'],
  ['VALIDATION_FAILED', 'from must be at the start of an hour (such as 2026-11-01T13:00:00Z) with granularity=hour'],
  ['VALIDATION_FAILED', 'from must be before to'],
  [
    'VALIDATION_FAILED',
    `A call covers at most ${USAGE_RANGE.hour.maxText} (${USAGE_RANGE.hour.maxBuckets} buckets): narrow from and to, or use granularity=day`,
  ],
];
const BAD_GRANULARITY: AdminExample = ['VALIDATION_FAILED', 'granularity must be one of hour, day'];
const FLEET_ONLY =
  'Restricted tokens (own consumers or plans only) are refused (403): this route reads every consumer.';

/**
 * Resolves when the response drains; rejects when it closes or fails first, or when it has not drained within
 * `withinMs`: a client gone, or one that stopped reading, never drains, and the export must end (its slot and its
 * connection given back), not wait on it.
 */
function drained(response: Response, withinMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const settle = (error?: Error): void => {
      clearTimeout(timer);
      response.off('drain', onDrain).off('close', onClose).off('error', settle);
      if (error) reject(error);
      else resolve();
    };
    const onDrain = (): void => settle();
    const onClose = (): void => settle(new ExportEnded('client_gone', 'The client went away during the export'));
    const timer = setTimeout(
      () => settle(new ExportEnded('stalled', `The client read nothing for ${withinMs} ms`)),
      withinMs,
    );
    response.once('drain', onDrain).once('close', onClose).once('error', settle);
  });
}

/** Usage history (issue #23): per consumer, fleet-wide, ranked, and as CSV. Thin: range by DTO, one service call. */
@ApiTags(ADMIN_TAG)
@ApiBearerAuth('bearer')
@Controller()
export class UsageAdminController {
  constructor(
    private readonly usage: UsageHistoryService,
    private readonly consumers: ConsumersService,
    private readonly exports: UsageExports,
    private readonly clock: Clock,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  @Get('consumers/:name/usage/history')
  @AdminOperation({
    operationId: 'getConsumerUsageHistory',
    summary: "Read a consumer's usage history, hour by hour or day by day",
    description:
      'Answers by outcome and latency percentiles per UTC hour or day, every bucket of the range (empty ones included), summed over its keys. Kept in the database: independent of Redis and restarts.',
  })
  @ApiOkResponse({ type: UsageHistoryResponse })
  @AdminErrors({
    400: [...BAD_RANGE, BAD_GRANULARITY, ['VALIDATION_FAILED', `name must be ${CONSUMER_NAME_RULE}`]],
    404: notFound(),
  })
  async consumerHistory(
    @AdminCall() call: AdminRequestContext,
    @Param() { name }: ConsumerParams,
    @Query() query: UsageHistoryQueryDto,
  ): Promise<UsageHistoryResponse> {
    const range = resolveRange(query, this.clock.now());
    await this.consumers.get(call.actor, name);
    return this.present(name, range.granularity, await this.usage.history(name, range));
  }

  @Get('usage/history')
  @AdminOperation({
    operationId: 'getFleetUsageHistory',
    summary: 'Read the usage history of every consumer together',
    description: `The same buckets summed over every consumer, the anonymous answers (no valid key) included; \`consumer\` is \`*\`. ${FLEET_ONLY}`,
  })
  @ApiOkResponse({ type: UsageHistoryResponse })
  @AdminErrors({ 400: [...BAD_RANGE, BAD_GRANULARITY] })
  async fleetHistory(@Query() query: UsageHistoryQueryDto): Promise<UsageHistoryResponse> {
    const range = resolveRange(query, this.clock.now());
    return this.present('*', range.granularity, await this.usage.history(undefined, range));
  }

  @Get('usage/top')
  @AdminOperation({
    operationId: 'getTopConsumers',
    summary: 'Rank the consumers by requests, 429s or 5xx answers',
    description: `Over [from, to): UTC days (the daily roll-up) when both are days or omitted (the last 30 days), else hours. At most ${TOP_LIMIT.max} consumers; the anonymous and overflow rows are left out. ${FLEET_ONLY}`,
  })
  @ApiOkResponse({ type: UsageTopResponse })
  @AdminErrors({
    400: [
      ...BAD_RANGE,
      ['VALIDATION_FAILED', `by must be one of ${TOP_BY.join(', ')}`],
      ['VALIDATION_FAILED', TOP_LIMIT.message],
    ],
  })
  async top(@Query() query: UsageTopQueryDto): Promise<UsageTopResponse> {
    const range = resolveTopRange(query, this.clock.now());
    const by = query.by ?? 'requests';
    const ranked = await this.usage.top(by, query.limit ?? TOP_LIMIT.default, range);
    return {
      from: range.from.toISOString(),
      to: range.to.toISOString(),
      by,
      consumers: ranked.map((r) => ({ consumer: r.consumer, ...toCountsResponse(r) })),
    };
  }

  @Get('usage/export')
  @AdminOperation({
    operationId: 'exportUsage',
    summary: 'Export the usage history as CSV, for billing and spreadsheets',
    description: `One line per consumer and UTC day (granularity=day, the default) or hour, in consumer then time order, streamed from a database cursor on a connection of its own; buckets without answers are not listed. The anonymous answers are the \`(anonymous)\` lines. ${FLEET_ONLY} At most \`USAGE_EXPORT_CONCURRENCY\` exports run at once on an instance (503 beyond). Once the CSV has begun, a client that reads nothing for \`USAGE_EXPORT_WRITE_TIMEOUT_MS\`, or an export still running after \`USAGE_EXPORT_TIMEOUT_MS\`, has its connection cut: the answer ends without its last chunk, never passing for a whole file.`,
  })
  @ApiOkResponse({
    description: 'CSV (RFC 4180), with a header line.',
    content: {
      'text/csv': {
        schema: { type: 'string' },
        example: `${USAGE_CSV_HEADER}\n${EXAMPLE_CONSUMER},2026-11-01T00:00:00.000Z,1200,1150,30,2,18\n`,
      },
    },
  })
  @AdminErrors({
    400: [...BAD_RANGE, BAD_GRANULARITY],
    503: {
      description:
        'The consumers database cannot be reached, or this instance already runs `USAGE_EXPORT_CONCURRENCY` exports (`SERVICE_UNAVAILABLE`): nothing was sent; retry after `Retry-After`.',
      examples: [['SERVICE_UNAVAILABLE', EXPORTS_BUSY_MESSAGE]],
    },
  })
  async export(@Query() query: UsageExportQueryDto, @Res() response: Response): Promise<void> {
    const range = resolveRange({ ...query, granularity: query.granularity ?? 'day' }, this.clock.now());
    const name = `usage-${range.granularity}-${range.from.toISOString().slice(0, 10)}-${range.to.toISOString().slice(0, 10)}.csv`;
    // The status and header line go out with the first page (or at the end): a database away before that is a 503.
    let started = false;
    const { writeTimeoutMs } = this.config.usage.export;
    const write = async (chunk: string, withinMs: number): Promise<void> => {
      if (!started) {
        started = true;
        response.status(200).setHeader('Content-Type', 'text/csv; charset=utf-8');
        response.setHeader('Content-Disposition', `attachment; filename="${name}"`);
        chunk = `${USAGE_CSV_HEADER}\r\n${chunk}`;
      }
      if (response.destroyed) throw new ExportEnded('client_gone', 'The client went away during the export');
      if (!response.write(chunk)) await drained(response, withinMs);
    };
    try {
      await this.exports.run(range, (rows, withinMs) =>
        write(
          rows
            .map((row) => `${row.consumer},${row.start.toISOString()},${CSV_COLUMNS.map((c) => row[c]).join(',')}\r\n`)
            .join(''),
          withinMs,
        ),
      );
      await write('', writeTimeoutMs);
      response.end();
    } catch (error) {
      if (!started) throw error;
      // Half a file must not pass for a whole one: the connection is cut, the client sees an incomplete answer. A
      // client that stopped reading is reset: the kernel drops at once what it still held for it.
      if (error instanceof ExportEnded && error.reason !== 'client_gone') response.socket?.resetAndDestroy();
      else response.destroy(error as Error);
    }
  }

  private present(
    consumer: string,
    granularity: UsageHistoryResponse['granularity'],
    buckets: Awaited<ReturnType<UsageHistoryService['history']>>,
  ): UsageHistoryResponse {
    return {
      consumer,
      granularity,
      buckets: buckets.map((b) => ({ start: new Date(b.start).toISOString(), ...toCountsResponse(b) })),
    };
  }
}
