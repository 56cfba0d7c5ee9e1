// @ts-check
/** The CLI's own mistakes (exit status 2, one line and where the help is) and the readers of its flags. */

/** A mistake in the command line, or a state the CLI will not guess through: exit status 2. */
class UsageError extends Error {}

/**
 * A flag's value as a positive integer; undefined when the flag is absent.
 * @param {string | undefined} value
 * @param {string} flag
 * @returns {number | undefined}
 */
function positiveInteger(value, flag) {
  if (value === undefined) return undefined;
  if (!/^[1-9][0-9]*$/.test(value) || !Number.isSafeInteger(Number(value)))
    throw new UsageError(`${flag} must be a positive integer`);
  return Number(value);
}

/**
 * A flag's value as an integer from 0; undefined when the flag is absent.
 * @param {string | undefined} value
 * @param {string} flag
 * @returns {number | undefined}
 */
function nonNegativeInteger(value, flag) {
  if (value === undefined) return undefined;
  if (!/^(0|[1-9][0-9]*)$/.test(value) || !Number.isSafeInteger(Number(value)))
    throw new UsageError(`${flag} must be an integer from 0`);
  return Number(value);
}

/**
 * A comma-separated flag (`--scopes a,b`): its items, trimmed; undefined when the flag is absent or empty.
 * @param {string | undefined} value
 * @returns {string[] | undefined}
 */
const commaList = (value) =>
  value
    ? value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean)
    : undefined;

/**
 * node:util parseArgs's own refusals (an unknown flag, a flag without its value) are usage errors too.
 * @param {unknown} error
 * @returns {boolean}
 */
const isUsageError = (error) =>
  error instanceof UsageError ||
  (error instanceof Error &&
    'code' in error &&
    (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE'));

module.exports = { UsageError, positiveInteger, nonNegativeInteger, commaList, isUsageError };
