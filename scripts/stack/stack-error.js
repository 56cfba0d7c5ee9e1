/** A failure of `npm run stack` that its message explains in one line: printed as it is, with no stack trace. */
class StackError extends Error {}

module.exports = { StackError };
