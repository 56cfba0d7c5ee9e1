import { Injectable } from '@nestjs/common';
import { emptyCounts, UsageCounts } from './usage-counts';
import { bucketStarts, UsageRange } from './usage-range';
import { RankedConsumer, TopBy, UsagePoint, UsageRepository } from './usage.repository';

/** The history as the admin API reads it: every bucket of a range, the ranking (the export: UsageExports). */
@Injectable()
export class UsageHistoryService {
  constructor(private readonly repository: UsageRepository) {}

  /** Every bucket of the range in time order, empty ones included: of `consumer`, or of the fleet (undefined). */
  async history(consumer: string | undefined, range: UsageRange): Promise<Array<{ start: number } & UsageCounts>> {
    const points = await this.repository.history(consumer, range.granularity, range.from, range.to);
    const byStart = new Map<number, UsagePoint>(points.map((p) => [p.start, p]));
    return bucketStarts(range).map((start) => byStart.get(start) ?? { start, ...emptyCounts() });
  }

  top(by: TopBy, limit: number, range: UsageRange): Promise<RankedConsumer[]> {
    return this.repository.top(by, limit, range.granularity, range.from, range.to);
  }
}
