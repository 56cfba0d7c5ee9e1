#!/usr/bin/env node
// @ts-check
/**
 * `npm run -s keys -- <command>`: the consumers and keys CLI, a client of a running gateway's admin API
 * (ADMIN_URL, ADMIN_TOKEN). Plain Node, type-checked (`// @ts-check`, tsconfig.scripts.json in `npm run
 * typecheck`) against the generated admin API types: nothing is built per call. Its parts are in scripts/cli/:
 * arguments, the admin client (openapi-fetch), help, output, and the commands by subject.
 */
const { main, runKeysCommand } = require('./cli/run');
const { usage } = require('./cli/help');
const { TOKEN_PRESETS } = require('./cli/token-presets');

module.exports = { runKeysCommand, usage, TOKEN_PRESETS };

if (require.main === module) main(process.argv.slice(2), process.env);
