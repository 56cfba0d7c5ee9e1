import type { AdminUsageBucket } from './admin-api-types';

export interface UsageTable {
  /** Unique on the page: ties the caption to the figure. */
  id: string;
  caption: string;
  /** 'hour' labels rows with the hour, 'day' with the date (both UTC). */
  granularity: 'hour' | 'day';
  columns: string[];
  /** `labelParts`: the label's date and hour, each kept on one line when a narrow table wraps the label. */
  rows: { start: string; label: string; labelParts: string[]; values: number[] }[];
}

export const USAGE_COLUMNS: { key: Exclude<keyof AdminUsageBucket, 'start'>; label: string }[] = [
  { key: 'requests', label: 'Requests' },
  { key: 'ok', label: 'OK' },
  { key: 'clientErrors', label: 'Client errors' },
  { key: 'rateLimited', label: 'Rate-limited' },
  { key: 'serverErrors', label: 'Server errors' },
];

/**
 * The model of the `usage` partial: a table of the buckets (one row per UTC day or hour), which the chart script
 * reads and draws: the chart never has numbers the table does not show.
 */
export function usageTable(
  caption: string,
  granularity: 'hour' | 'day',
  buckets: readonly AdminUsageBucket[],
  columns = USAGE_COLUMNS,
): UsageTable {
  return {
    id: caption
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, ''),
    caption,
    granularity,
    columns: columns.map((column) => column.label),
    rows: buckets.map((bucket) => {
      const label =
        granularity === 'day'
          ? new Date(bucket.start).toISOString().slice(0, 10)
          : `${new Date(bucket.start).toISOString().slice(0, 13).replace('T', ' ')}:00`;
      return {
        start: new Date(bucket.start).toISOString(),
        label,
        labelParts: label.split(' '),
        values: columns.map((column) => Number(bucket[column.key] ?? 0)),
      };
    }),
  };
}
