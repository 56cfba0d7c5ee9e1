// @ts-check
/** Usage (issue #23): the current windows, a consumer's hours or days, the ranking, the CSV. */
const { createWriteStream, renameSync, rmSync } = require('node:fs');
const path = require('node:path');
const { Readable } = require('node:stream');
const { pipeline } = require('node:stream/promises');
const { adminClient, answer } = require('../admin');
const { UsageError } = require('../arguments');
const { ms } = require('../output');

/** @typedef {import('../../../libs/web/src/generated/admin-api').operations} Operations */
/** @typedef {import('./consumers').ConsumerFlags} ConsumerFlags */
/** @typedef {import('../output').Out} Out */

/** The export streams a whole range: it may take longer than a call. */
const EXPORT_TIMEOUT_MS = 600_000;

/**
 * The flags of a usage call that were given, as its query (the admin API applies its own defaults, and checks
 * the values: a wrong one is its 400).
 * @template {keyof ConsumerFlags} K
 * @param {ConsumerFlags} values
 * @param {K[]} names
 * @returns {any}
 */
function given(values, names) {
  /** @type {Record<string, unknown>} */
  const query = {};
  for (const key of names) if (values[key] !== undefined) query[key] = values[key];
  return query;
}

/**
 * @param {() => import('../admin').AdminSettings} admin
 * @param {string | undefined} consumer
 * @param {ConsumerFlags} values
 * @param {Out} out
 */
async function usageCommand(admin, consumer, values, out) {
  if (values.top || values.export !== undefined) return usageFleet(admin(), values, out);
  if (!consumer) throw new UsageError('usage needs the consumer name');
  const api = adminClient(admin());
  if (values.history) return usageHistory(api, consumer, values, out);
  const usage = await answer(api.GET('/consumers/{name}/usage', { params: { path: { name: consumer } } }));
  for (const w of usage.windows)
    out(`${w.name}\t${w.used}/${w.limit} used\t${w.remaining} remaining\tresets in ${w.resetSeconds}s`);
  out(usage.banned ? `banned for ${usage.banSecondsLeft}s more` : 'not banned');
}

/**
 * One line per bucket (start, answers by outcome, latency), then the totals.
 * @param {import('../admin').AdminClient} api
 * @param {string} consumer
 * @param {ConsumerFlags} values
 * @param {Out} out
 */
async function usageHistory(api, consumer, values, out) {
  /** @type {NonNullable<Operations['getConsumerUsageHistory']['parameters']['query']>} */
  const query = given(values, ['from', 'to', 'granularity']);
  const history = await answer(
    api.GET('/consumers/{name}/usage/history', { params: { path: { name: consumer }, query } }),
  );
  out(`${history.consumer}, by ${history.granularity} (UTC)`);
  out('start\trequests\tok\t4xx\t429\t5xx\tp50\tp95');
  const total = { requests: 0, ok: 0, clientErrors: 0, rateLimited: 0, serverErrors: 0 };
  for (const b of history.buckets) {
    out(
      `${b.start}\t${b.requests}\t${b.ok}\t${b.clientErrors}\t${b.rateLimited}\t${b.serverErrors}\t${ms(b.p50Ms)}\t${ms(b.p95Ms)}`,
    );
    for (const field of /** @type {(keyof typeof total)[]} */ (Object.keys(total))) total[field] += b[field];
  }
  out(`total\t${total.requests}\t${total.ok}\t${total.clientErrors}\t${total.rateLimited}\t${total.serverErrors}`);
}

/**
 * --top: the consumers ranked; --export FILE: the CSV, streamed to a file (written whole, then renamed).
 * @param {import('../admin').AdminSettings} settings
 * @param {ConsumerFlags} values
 * @param {Out} out
 */
async function usageFleet(settings, values, out) {
  if (values.top) {
    /** @type {NonNullable<Operations['getTopConsumers']['parameters']['query']>} */
    const query = given(values, ['from', 'to', 'by', 'limit']);
    const top = await answer(adminClient(settings).GET('/usage/top', { params: { query } }));
    out(`Top consumers by ${top.by}, ${top.from} to ${top.to} (UTC)`);
    out('consumer\trequests\tok\t4xx\t429\t5xx\tp50\tp95');
    for (const c of top.consumers)
      out(
        `${c.consumer}\t${c.requests}\t${c.ok}\t${c.clientErrors}\t${c.rateLimited}\t${c.serverErrors}\t${ms(c.p50Ms)}\t${ms(c.p95Ms)}`,
      );
    if (top.consumers.length === 0) out('(no answers in this range)');
    return;
  }
  const file = values.export;
  if (!file) throw new UsageError('--export needs a file name');
  /** @type {NonNullable<Operations['exportUsage']['parameters']['query']>} */
  const query = given(values, ['from', 'to', 'granularity']);
  const stream = await answer(
    adminClient(settings, EXPORT_TIMEOUT_MS).GET('/usage/export', { params: { query }, parseAs: 'stream' }),
  );
  if (!stream) throw new Error('the admin API sent no CSV');
  const temporary = `${file}.${process.pid}.tmp`;
  let lines = 0;
  const body = Readable.fromWeb(/** @type {import('node:stream/web').ReadableStream} */ (stream));
  body.on('data', (chunk) => (lines += chunk.toString('utf8').split('\n').length - 1));
  try {
    await pipeline(body, createWriteStream(temporary, { mode: 0o600 }));
  } catch (error) {
    rmSync(temporary, { force: true }); // a cut stream leaves no half file behind
    throw error;
  }
  renameSync(temporary, file);
  out(`Exported ${Math.max(0, lines - 1)} line(s) of usage to ${path.resolve(file)}.`);
}

module.exports = { usageCommand };
