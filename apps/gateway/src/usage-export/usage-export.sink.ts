/**
 * One request the delivery worker sends to the ingest URL: the body in the configured format, its content type,
 * and the ids of the aggregates it carries (to mark them delivered once the sink acknowledged it).
 */
export interface UsageExportRequest {
  contentType: string;
  body: string;
  ids: string[];
}

/**
 * The seam to delivery (not built here: the outbox and the outbound sender, libs/outbound). A sink resolves once
 * the ingest URL acknowledged the request (2xx) and throws otherwise; the caller retries with the same body, so
 * delivery is at least once and the sinks' deduplication on the aggregate id makes it count once.
 */
export interface UsageExportSink {
  deliver(request: UsageExportRequest): Promise<void>;
}
