// @ts-check
/**
 * What a job's token holds (docs/admin-tokens.md): `--for portal` is the self-service front end's, which names the
 * developer behind each call in the audit (actsForUsers: only root may grant it). Read by `npm start` and
 * `npm run stack` too, which make the portal's token.
 * @type {Record<string, { scopes: import('./admin').AdminSchemas['CreateAdminTokenDto']['scopes'], ownConsumersOnly: boolean, plans: string[], actsForUsers: boolean }>}
 */
const TOKEN_PRESETS = {
  portal: {
    scopes: [
      'consumers:read',
      'consumers:write',
      'keys:write',
      'usage:read',
      'plan-requests:read',
      'plan-requests:write',
      'webhooks:read',
      'webhooks:write',
    ],
    ownConsumersOnly: true,
    plans: ['free'],
    actsForUsers: true,
  },
};

module.exports = { TOKEN_PRESETS };
