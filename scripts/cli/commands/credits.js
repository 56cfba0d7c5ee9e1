// @ts-check
/**
 * Prepaid credits (issue #38): a consumer's balance, refill, costs, ledger (newest first), spend per day and
 * projected exhaustion; a top-up; setting the balance (or ending credits). Refill and costs are set by `billing`.
 */
const { parseArgs } = require('node:util');
const { adminClient, adminSettings, answer } = require('../admin');
const { UsageError, nonNegativeInteger, positiveInteger } = require('../arguments');
const { costsLine, refillLine } = require('./billing');

/** @typedef {import('../admin').AdminSchemas} AdminSchemas */
/** @typedef {import('../output').Out} Out */

/**
 * @param {string[]} argv the words after "credits"
 * @param {NodeJS.ProcessEnv} env
 * @param {Out} out
 */
async function runCreditsCommand(argv, env, out) {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      amount: { type: 'string' },
      balance: { type: 'string' },
      reason: { type: 'string' },
      days: { type: 'string' },
    },
  });
  const [verb] = positionals;
  if (verb === 'top-up' || verb === 'set') {
    const [, consumer, extra] = positionals;
    if (!consumer) throw new UsageError(`credits ${verb} needs the consumer name`);
    if (extra !== undefined) throw new UsageError(`credits ${verb} takes one consumer name, not "${extra}" too`);
    const reason = values.reason;
    if (!reason) throw new UsageError(`credits ${verb} needs --reason TEXT: the ledger and the audit keep it`);
    const params = { path: { name: consumer } };
    if (verb === 'top-up') {
      const amount = positiveInteger(values.amount, '--amount');
      if (amount === undefined) throw new UsageError('credits top-up needs --amount N');
      const api = adminClient(adminSettings(env));
      const topped = await answer(api.POST('/consumers/{name}/credits/top-ups', { params, body: { amount, reason } }));
      out(`Topped up "${consumer}" by ${amount} (audited): its balance is ${topped.balance}.`);
      return;
    }
    if (values.balance === undefined) throw new UsageError('credits set needs --balance N (or none)');
    const balance = values.balance === 'none' ? null : Number(nonNegativeInteger(values.balance, '--balance'));
    const api = adminClient(adminSettings(env));
    const set = await answer(api.PUT('/consumers/{name}/credits', { params, body: { balance, reason } }));
    out(
      set.balance === null
        ? `Credits are no longer in force for "${consumer}" (audited): its requests are not charged.`
        : `Set the balance of "${consumer}" to ${set.balance} (audited).`,
    );
    return;
  }
  // "credits show NAME" says the same as "credits NAME", for a consumer whose name is a verb (top-up, set, show).
  const [consumer, extra] = verb === 'show' ? positionals.slice(1) : positionals;
  if (!consumer) throw new UsageError('credits needs the consumer name (or top-up, set, show)');
  if (extra !== undefined) throw new UsageError(`credits takes one consumer name, not "${extra}" too`);
  const days = positiveInteger(values.days, '--days');
  const api = adminClient(adminSettings(env));
  const params = { path: { name: consumer } };
  const [billing, ledger] = await Promise.all([
    answer(api.GET('/consumers/{name}/billing', { params })),
    answer(api.GET('/consumers/{name}/credits/ledger', { params: { ...params, query: days ? { days } : {} } })),
  ]);
  out(`consumer\t${consumer}`);
  const credits = billing.credits;
  if (!credits) out('credits\tnot in force (a top-up puts them in force)');
  else {
    out(`balance\t${credits.balance}`);
    out(refillLine(credits));
    out(costsLine(credits.costs));
  }
  out(`projected exhaustion\t${exhaustionWords(ledger, credits)}`);
  out(`spend per day (UTC)`);
  out('day\tspent');
  for (const d of ledger.spendPerDay) out(`${d.day}\t${d.spent}`);
  out('ledger (newest first)');
  out('at\tkind\tamount\tbalance after\treason\tactor');
  for (const e of ledger.entries)
    out(`${e.at}\t${e.kind}\t${e.amount}\t${e.balanceAfter}\t${e.reason ?? '-'}\t${e.actor}`);
  if (ledger.entries.length === 0) out('(no entries)');
}

/**
 * The ledger's projection in words: a date, "exhausted" (until the next refill, if one is scheduled), or none.
 * @param {AdminSchemas['LedgerResponse']} ledger
 * @param {AdminSchemas['CreditsResponse'] | null | undefined} credits
 */
function exhaustionWords(ledger, credits) {
  if (ledger.exhaustion === 'exhausted')
    return credits?.nextRefillAt ? `exhausted until ${credits.nextRefillAt}` : 'exhausted (only a top-up adds credits)';
  return ledger.projectedExhaustionAt ?? 'none (no spend in the last 7 days, or a refill covers it)';
}

module.exports = { runCreditsCommand };
