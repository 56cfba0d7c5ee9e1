// @ts-check
/** The CLI's verbs: help, then each group of commands; how a failure ends (exit status 2 for usage, 1 otherwise). */
// Each group of commands is loaded when its verb is run (help loads none, nor the admin client): start-up is
// what a command needs (docs/decisions.md, the admin client entry).
const { isUsageError, UsageError } = require('./arguments');
const { helpText, verbHelp } = require('./help');

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
  if (argv[0] === 'token' || argv[0] === 'audit')
    return require('./commands/tokens-audit').runTokenAuditCommand(argv, env, out);
  if (argv[0] === 'requests') return require('./commands/plan-requests').runPlanRequestCommand(argv.slice(1), env, out);
  if (argv[0] === 'billing') return require('./commands/billing').runBillingCommand(argv.slice(1), env, out);
  if (argv[0] === 'webhooks') return require('./commands/webhooks').runWebhooksCommand(argv.slice(1), env, out);
  if (['bind', 'unbind', 'bindings'].includes(argv[0]))
    return require('./commands/client-bindings').runClientBindingCommand(argv[0], argv.slice(1), env, out);
  if (argv[0] === 'allow') return require('./commands/allowed-addresses').runAllowCommand(argv.slice(1), env, out);
  if (argv[0] === 'events')
    return require('./commands/threshold-events').runThresholdEventsCommand(argv.slice(1), env, out);
  if (argv[0] === 'credits') return require('./commands/credits').runCreditsCommand(argv.slice(1), env, out);
  return require('./commands/consumers').runConsumerCommand(argv, env, out);
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
