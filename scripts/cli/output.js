// @ts-check
/**
 * How the CLI prints what the admin API answered: one line per row, fields separated by tabs (the columns of the
 * console's tables, in their order), so `cut -f` and spreadsheets read it.
 */

/** @typedef {import('./admin').AdminSchemas} AdminSchemas */
/** @typedef {(line: string) => void} Out */

/**
 * @param {AdminSchemas['LimitsDto'] | null | undefined} limits
 * @returns {string}
 */
function figures(limits) {
  return limits ? `${limits.perMinute}/min ${limits.perDay}/day` : 'no limits';
}

/**
 * One line per consumer, as the file-based CLI printed it: name, plan, limits, hint, created, state.
 * @param {AdminSchemas['ConsumerResponse']} consumer
 * @returns {string}
 */
function listLine(consumer) {
  const current =
    [...consumer.keys].reverse().find((k) => k.state === 'active') ?? consumer.keys[consumer.keys.length - 1];
  let state;
  if (consumer.disabledAt) state = `disabled ${consumer.disabledAt}`;
  else if (current?.state === 'revoked') state = `revoked ${current.revokedAt}`;
  else if (current?.state === 'expired') state = `expired ${current.expiresAt}`;
  else state = current?.expiresAt ? `active until ${current.expiresAt}` : 'active';
  const others = consumer.keys.filter((k) => k.state === 'active').length - (current?.state === 'active' ? 1 : 0);
  return `${consumer.name}\t${consumer.plan}\t${figures(consumer.effectiveLimits)}\t${current?.hint ?? '-'}\tcreated ${consumer.createdAt}\t${state}${others > 0 ? ` (+${others} more active key${others > 1 ? 's' : ''})` : ''}`;
}

/**
 * Under each consumer's line, one line per active key: its id (what --key takes), hint and state.
 * @param {AdminSchemas['ConsumerResponse']} consumer
 * @returns {string[]}
 */
function keyLines(consumer) {
  return consumer.keys
    .filter((k) => k.state === 'active')
    .map(
      (k) =>
        `  key ${k.id}\t${k.hint}\tactive${k.expiresAt ? ` until ${k.expiresAt}` : ''}${k.replacedBy ? ` (rotated: its successor is key ${k.replacedBy})` : ''}`,
    );
}

/**
 * A latency, or "-" where there was no answer to measure.
 * @param {number | null} value
 */
const ms = (value) => (value === null ? '-' : `${value}ms`);

module.exports = { figures, listLine, keyLines, ms };
