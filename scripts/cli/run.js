// @ts-check
/** The CLI's verbs: help, then each group of commands; how a failure ends (exit status 2 for usage, 1 otherwise). */
const { isUsageError, UsageError } = require('./arguments');
const { helpText, verbHelp } = require('./help');
const { runBillingCommand } = require('./commands/billing');
const { runConsumerCommand } = require('./commands/consumers');
const { runPlanRequestCommand } = require('./commands/plan-requests');
const { runTokenAuditCommand } = require('./commands/tokens-audit');

/**
 * Runs one command line (the words after `npm run -s keys --`), writing its output a line at a time to `out`.
 * @param {string[]} argv
 * @param {NodeJS.ProcessEnv} env
 * @param {import('./output').Out} out
 * @returns {Promise<void>}
 */
async function runKeysCommand(argv, env, out) {
  const asksHelp = argv.includes('--help') || argv.includes('-h');
  const verb = argv.find((arg) => !arg.startsWith('-'));
  if (argv.length === 0 || asksHelp || verb === 'help') {
    const text = verb && verb !== 'help' ? verbHelp(verb, env) : helpText(env);
    if (text === undefined) throw new UsageError(`unknown command "${verb}"`);
    for (const line of text.split('\n')) out(line);
    return;
  }
  if (argv[0] === 'token' || argv[0] === 'audit') return runTokenAuditCommand(argv, env, out);
  if (argv[0] === 'requests') return runPlanRequestCommand(argv.slice(1), env, out);
  if (argv[0] === 'billing') return runBillingCommand(argv.slice(1), env, out);
  return runConsumerCommand(argv, env, out);
}

/**
 * The process: stdout a line at a time, and a failure as one line on stderr (a usage error with where its help
 * is: not the whole usage after every mistake) and its exit status.
 * @param {string[]} argv
 * @param {NodeJS.ProcessEnv} env
 */
function main(argv, env) {
  // A reader that stops early (| head) ends the output, not the CLI with a stack trace.
  process.stdout.on('error', (error) =>
    process.exit(/** @type {NodeJS.ErrnoException} */ (error).code === 'EPIPE' ? 0 : 1),
  );
  runKeysCommand(argv, env, (line) => process.stdout.write(`${line}\n`)).catch((error) => {
    const message = error instanceof Error ? error.message : String(error);
    if (isUsageError(error)) {
      const verb = argv.find((arg) => !arg.startsWith('-'));
      const hint = verb && verbHelp(verb, env) ? `npm run -s keys -- ${verb} --help` : 'npm run -s keys -- --help';
      process.stderr.write(`keys: ${message}\nSee: ${hint}\n`);
      process.exit(2);
    }
    process.stderr.write(`keys: ${message}\n`);
    process.exit(1);
  });
}

module.exports = { runKeysCommand, main };
