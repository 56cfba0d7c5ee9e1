// @ts-check
/**
 * Billing (issue #38): a consumer's billing anchor, monthly quota, current period, credit refill and costs; moving
 * the anchor, setting the quota, the refill and the costs.
 */
const { parseArgs } = require('node:util');
const { adminClient, adminSettings, answer } = require('../admin');
const { UsageError, positiveInteger } = require('../arguments');

/** @typedef {import('../admin').AdminSchemas} AdminSchemas */
/** @typedef {import('../output').Out} Out */

/**
 * What `billing NAME` shows, a line per field: the anchor (whose), the monthly quota (whose), the current period.
 * @param {AdminSchemas['BillingResponse']} billing
 * @returns {string[]}
 */
function billingLines(billing) {
  const quota =
    billing.perMonth === null
      ? 'none'
      : `${billing.perMonth}\t${billing.ownPerMonth === null ? "(its plan's)" : '(its own)'}`;
  return [
    `consumer\t${billing.consumer}`,
    `anchor\t${billing.billingAnchor}\t${billing.anchorSet ? '(its own)' : '(its creation time)'}`,
    `per month\t${quota}`,
    `period\t${billing.currentPeriod.start}\t${billing.currentPeriod.end}`,
    ...(billing.credits
      ? [refillLine(billing.credits), costsLine(billing.credits.costs)]
      : ['credits\tnot in force (a top-up puts them in force)']),
  ];
}

/**
 * The refill in force: amount per day or month, whose (its own, its plan's), and when it comes next.
 * @param {NonNullable<AdminSchemas['CreditsResponse']>} credits
 */
const refillLine = (credits) =>
  credits.refill
    ? `refill\t${credits.refill.amount}/${credits.refill.every}\t${credits.refillSet ? '(its own)' : "(its plan's)"}\tnext ${credits.nextRefillAt ?? '-'}`
    : 'refill\tnone';

/**
 * Every public operation's cost, by operation id.
 * @param {Record<string, number>} costs
 */
const costsLine = (costs) =>
  `costs\t${Object.keys(costs)
    .sort()
    .map((operation) => `${operation}=${costs[operation]}`)
    .join(' ')}`;

/**
 * --refill N/day|N/month|none.
 * @param {string} value
 * @returns {AdminSchemas['CreditRefillBody']}
 */
function readRefill(value) {
  const match = /^([1-9][0-9]*)\/(day|month)$/.exec(value);
  if (!match || !Number.isSafeInteger(Number(match[1])))
    throw new UsageError('--refill must be N/day, N/month (N a positive integer) or none');
  return { amount: Number(match[1]), every: match[2] === 'day' ? 'day' : 'month' };
}

/**
 * --cost OPERATION=N (repeated), or --cost none alone: the consumer's own costs (the others stay its plan's).
 * @param {string[]} values
 * @returns {Record<string, number> | null}
 */
function readCosts(values) {
  if (values.includes('none')) {
    if (values.length > 1) throw new UsageError("--cost none goes alone (back to its plan's costs)");
    return null;
  }
  /** @type {Record<string, number>} */
  const costs = {};
  for (const value of values) {
    const match = /^([A-Za-z][A-Za-z0-9]*)=(0|[1-9][0-9]*)$/.exec(value);
    if (!match || !Number.isSafeInteger(Number(match[2])))
      throw new UsageError(`--cost must be OPERATION=N (an operation id, N an integer from 0) or none, not "${value}"`);
    costs[match[1]] = Number(match[2]);
  }
  return costs;
}

/**
 * `--flag none` is null (back to the default); anything else is read by `read`.
 * @template T
 * @param {string | undefined} value
 * @param {(value: string) => T} read
 * @returns {T | null | undefined}
 */
const orNone = (value, read) => (value === undefined ? undefined : value === 'none' ? null : read(value));

/**
 * @param {string[]} argv the words after "billing"
 * @param {NodeJS.ProcessEnv} env
 * @param {Out} out
 */
async function runBillingCommand(argv, env, out) {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      anchor: { type: 'string' },
      'per-month': { type: 'string' },
      refill: { type: 'string' },
      cost: { type: 'string', multiple: true },
    },
  });
  const [consumer, extra] = positionals;
  if (!consumer) throw new UsageError('billing needs the consumer name');
  if (extra !== undefined) throw new UsageError(`billing takes one consumer name, not "${extra}" too`);
  /** @type {AdminSchemas['UpdateBillingDto']} */
  const change = {};
  // The admin API checks the date (400 naming the rule): the CLI passes it as it is.
  const anchor = orNone(values.anchor, (value) => value);
  if (anchor !== undefined) change.billingAnchor = anchor;
  const perMonth = orNone(values['per-month'], (value) => positiveInteger(value, '--per-month'));
  if (perMonth !== undefined) change.perMonth = perMonth;
  const refill = orNone(values.refill, readRefill);
  if (refill !== undefined) change.creditRefill = refill;
  // The admin API checks the operation ids (400 naming the ones it knows).
  if (values.cost !== undefined) change.costs = readCosts(values.cost);
  const api = adminClient(adminSettings(env));
  const params = { path: { name: consumer } };
  if (Object.keys(change).length === 0) {
    for (const line of billingLines(await answer(api.GET('/consumers/{name}/billing', { params })))) out(line);
    return;
  }
  const changed = await answer(api.PATCH('/consumers/{name}/billing', { params, body: change }));
  out(`Changed the billing of "${changed.consumer}" (audited); every gateway applies it at once:`);
  for (const line of billingLines(changed)) out(line);
}

module.exports = { runBillingCommand, billingLines, refillLine, costsLine };
