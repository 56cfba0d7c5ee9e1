// @ts-check
/** Scoped admin tokens and the audit log (issue #24): token create, list, revoke; audit. */
const { parseArgs } = require('node:util');
const { adminClient, adminSettings, answer } = require('../admin');
const { UsageError, commaList, positiveInteger } = require('../arguments');
const { TOKEN_PRESETS } = require('../token-presets');
const { PAGE } = require('./consumers-file');

/** @typedef {import('../admin').AdminClient} AdminClient */
/** @typedef {import('../admin').AdminSchemas} AdminSchemas */
/** @typedef {import('../output').Out} Out */

/** @param {string[]} argv */
const parseTokenAuditArgs = (argv) =>
  parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      scopes: { type: 'string' },
      expires: { type: 'string' },
      own: { type: 'boolean' },
      plans: { type: 'string' },
      for: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      actor: { type: 'string' },
      target: { type: 'string' },
      action: { type: 'string' },
      limit: { type: 'string' },
      order: { type: 'string' },
    },
  });

/** @typedef {ReturnType<typeof parseTokenAuditArgs>['values']} TokenAuditFlags */

/**
 * @param {string[]} argv
 * @param {NodeJS.ProcessEnv} env
 * @param {Out} out
 */
async function runTokenAuditCommand(argv, env, out) {
  const { positionals, values } = parseTokenAuditArgs(argv);
  const [command, verb, ...rest] = positionals;
  const api = adminClient(adminSettings(env));
  if (command === 'audit') return audit(api, values, out);
  switch (verb) {
    case 'create':
      return createToken(api, values, out);
    case 'list': {
      const tokens = await answer(api.GET('/tokens'));
      for (const t of tokens) {
        const state = t.revokedAt
          ? `revoked ${t.revokedAt}`
          : t.expiresAt && Date.parse(t.expiresAt) <= Date.now()
            ? `expired ${t.expiresAt}`
            : 'active';
        out(
          `${t.id}\t${t.name}\t${t.hint}\t${t.scopes.join(',')}${t.ownConsumersOnly ? '\town' : ''}${t.plans ? `\tplans:${t.plans.join(',')}` : ''}\t${state}\tlast used ${t.lastUsedAt ?? 'never'}`,
        );
      }
      if (tokens.length === 0) out('No admin tokens.');
      return;
    }
    case 'revoke': {
      const id = rest[0];
      if (!id) throw new UsageError('token revoke needs the token id (token list shows it)');
      const revoked = await answer(api.POST('/tokens/{id}/revoke', { params: { path: { id } } }));
      out(`Revoked admin token "${revoked.name}" (${revoked.id}). Every gateway refuses it within a second.`);
      return;
    }
    default:
      throw new UsageError(verb ? `unknown token command "${verb}"` : 'token needs create, list or revoke');
  }
}

/**
 * @param {AdminClient} api
 * @param {TokenAuditFlags} values
 * @param {Out} out
 */
async function createToken(api, values, out) {
  const preset = values.for === undefined ? undefined : TOKEN_PRESETS[values.for];
  if (values.for !== undefined && !preset)
    throw new UsageError(`--for must be one of ${Object.keys(TOKEN_PRESETS).join(', ')}`);
  const name = values.name ?? values.for;
  if (!name) throw new UsageError('token create needs --name NAME (or --for portal)');
  const scopes = commaList(values.scopes) ?? preset?.scopes;
  if (!scopes || scopes.length === 0) throw new UsageError('token create needs --scopes a,b (or --for portal)');
  const plans = commaList(values.plans) ?? preset?.plans;
  /** @type {AdminSchemas['CreateAdminTokenDto']} */
  const body = {
    name,
    // The admin API checks each scope and plan (400 naming the unknown one).
    scopes: /** @type {AdminSchemas['CreateAdminTokenDto']['scopes']} */ (scopes),
    ownConsumersOnly: values.own ?? preset?.ownConsumersOnly ?? false,
    ...(plans ? { plans: /** @type {AdminSchemas['CreateAdminTokenDto']['plans']} */ (plans) } : {}),
    actsForUsers: preset?.actsForUsers ?? false,
  };
  if (values.expires) body.expiresAt = values.expires;
  const created = await answer(api.POST('/tokens', { body }));
  const r = created.record;
  out(
    `Created admin token "${r.name}" (${r.id}): ${r.scopes.join(', ')}${r.ownConsumersOnly ? ', own consumers only' : ''}${r.plans ? `, plans ${r.plans.join(', ')}` : ''}${r.actsForUsers ? ', acts for users' : ''}${r.expiresAt ? `, expires ${r.expiresAt}` : ''}. The token is shown only now:`,
  );
  out(created.token);
}

/**
 * The audit log, newest first by default (as the console shows it), a page at a time up to --limit rows.
 * @param {AdminClient} api
 * @param {TokenAuditFlags} values
 * @param {Out} out
 */
async function audit(api, values, out) {
  const limit = positiveInteger(values.limit, '--limit');
  const order = values.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw new UsageError('--order must be desc (newest first) or asc');
  /** @type {Record<string, string>} */
  const filters = {};
  for (const field of /** @type {const} */ (['from', 'to', 'actor', 'target', 'action']))
    if (values[field]) filters[field] = /** @type {string} */ (values[field]);
  /** @type {string | undefined} */
  let after;
  let shown = 0;
  do {
    const pageSize = Math.min(PAGE, limit === undefined ? PAGE : limit - shown);
    const page = await answer(api.GET('/audit', { params: { query: { order, ...filters, limit: pageSize, after } } }));
    for (const row of page.items) {
      const target = [
        row.targetConsumer && `consumer:${row.targetConsumer}`,
        row.targetKey && `key:${row.targetKey}`,
        row.targetToken && `token:${row.targetToken}`,
      ]
        .filter(Boolean)
        .join(' ');
      out(
        `${row.at}\t${row.actorName}${row.actorId ? ` (${row.actorId})` : ''}\t${row.action}\t${target || '-'}\t${row.changes ? JSON.stringify(row.changes) : ''}\t${row.source ?? ''}\t${row.requestId ?? ''}`,
      );
    }
    shown += page.items.length;
    after = page.next ?? undefined;
  } while (after && (limit === undefined || shown < limit));
  if (shown === 0) out('No audit rows.');
}

module.exports = { runTokenAuditCommand };
