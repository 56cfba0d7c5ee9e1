/** The one source of what a job's admin token holds: `npm start`, the stack and the CLI's `--for portal` read it. */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the presets are the CLI's CommonJS, read as they are
export const { TOKEN_PRESETS } = require('../../scripts/cli/token-presets') as {
  TOKEN_PRESETS: { portal: { scopes: string[]; ownConsumersOnly: boolean; plans: string[]; actsForUsers: boolean } };
};
