// @ts-check
/** Billing (issue #38): a consumer's billing anchor, monthly quota and current period; moving the anchor, setting the quota. */
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
  ];
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
    options: { anchor: { type: 'string' }, 'per-month': { type: 'string' } },
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

module.exports = { runBillingCommand, billingLines };
