// @ts-check
/**
 * A consumer's threshold events (docs/alerts.md), newest first: what its webhooks were sent, one line each.
 */
const { parseArgs } = require('node:util');
const { adminClient, adminSettings, answer } = require('../admin');
const { UsageError, positiveInteger } = require('../arguments');

/** @typedef {import('../admin').AdminSchemas} AdminSchemas */
/** @typedef {import('../output').Out} Out */

/**
 * One event per line: when, the type, the policy and threshold, the counts (or the balance), the period, the id.
 * @param {AdminSchemas['ThresholdEventPayload']} e
 */
const eventLine = (e) =>
  e.policy === 'credits'
    ? `${e.crossedAt}\t${e.type}\tcredits ≤ ${e.threshold}\tbalance ${e.balance}\tarmed ${e.periodStart}\t${e.id}`
    : `${e.crossedAt}\t${e.type}\t${e.policy} ${e.threshold} %\tused ${e.used} of ${e.limit}\t${e.periodStart} – ${e.periodEnd}\t${e.id}`;

/**
 * @param {string[]} argv the words after "events"
 * @param {NodeJS.ProcessEnv} env
 * @param {Out} out
 */
async function runThresholdEventsCommand(argv, env, out) {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { policy: { type: 'string' }, type: { type: 'string' }, limit: { type: 'string' } },
  });
  const [name, extra] = positionals;
  if (!name) throw new UsageError('events needs the consumer name');
  if (extra !== undefined) throw new UsageError(`events takes one consumer name, not "${extra}" too`);
  const query = {
    limit: positiveInteger(values.limit, '--limit') ?? 20,
    // The admin API checks them (400 naming the values it knows).
    ...(values.policy !== undefined ? { policy: /** @type {any} */ (values.policy) } : {}),
    ...(values.type !== undefined ? { type: /** @type {any} */ (values.type) } : {}),
  };
  const page = await answer(
    adminClient(adminSettings(env)).GET('/consumers/{name}/threshold-events', { params: { path: { name }, query } }),
  );
  for (const e of page.items) out(eventLine(e));
  if (page.items.length === 0) out('No threshold events.');
}

module.exports = { runThresholdEventsCommand };
