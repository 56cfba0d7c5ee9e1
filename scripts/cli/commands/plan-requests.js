// @ts-check
/** Plan requests: what developers asked for on the portal; list, approve, decline. */
const { parseArgs } = require('node:util');
const { adminClient, adminSettings, answer } = require('../admin');
const { UsageError } = require('../arguments');

/** @typedef {import('../admin').AdminSchemas['PlanRequestResponse']} PlanRequest */
/** @typedef {import('../../../libs/web/src/generated/admin-api').operations} Operations */
/** @typedef {import('../output').Out} Out */

/**
 * One request per line: id, consumer, plans, status, dates, then the note and the requester's message.
 * @param {PlanRequest} r
 */
const line = (r) =>
  `${r.id}\t${r.consumer}\t${r.currentPlan} -> ${r.requestedPlan}\t${r.status}\t${r.createdAt}${r.decidedAt ? `\tdecided ${r.decidedAt}` : ''}${r.note ? `\tnote: ${r.note}` : ''}${r.message ? `\tmessage: ${r.message}` : ''}`;

/**
 * @param {string[]} argv
 * @param {NodeJS.ProcessEnv} env
 * @param {Out} out
 */
async function runPlanRequestCommand(argv, env, out) {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { status: { type: 'string' }, consumer: { type: 'string' }, note: { type: 'string' } },
  });
  const [verb, id] = positionals;
  const api = adminClient(adminSettings(env));
  if (verb === undefined) {
    /** @type {NonNullable<Operations['listPlanRequests']['parameters']['query']>} */
    const filters = {
      // The admin API checks the status (400 naming the ones it knows).
      status: /** @type {any} */ (values.status ?? 'pending'),
      ...(values.consumer ? { consumer: values.consumer } : {}),
    };
    /** @type {string | undefined} */
    let after;
    let shown = 0;
    do {
      const page = await answer(api.GET('/plan-requests', { params: { query: { ...filters, after } } }));
      for (const r of page.items) out(line(r));
      shown += page.items.length;
      after = page.next ?? undefined;
    } while (after);
    if (shown === 0) out(`No ${values.status ?? 'pending'} plan requests.`);
    return;
  }
  if (verb !== 'approve' && verb !== 'decline')
    throw new UsageError(`unknown requests command "${verb}": approve or decline`);
  if (!id) throw new UsageError(`requests ${verb} needs the request's id (requests lists them)`);
  const note = values.note;
  if (verb === 'decline' && !note)
    throw new UsageError('requests decline needs --note TEXT: the requester reads it on the portal');
  const params = { path: { id } };
  const decided = await answer(
    verb === 'approve'
      ? api.POST('/plan-requests/{id}/approve', { params, body: note ? { note } : {} })
      : api.POST('/plan-requests/{id}/decline', { params, body: { note: note ?? '' } }),
  );
  out(`${verb === 'approve' ? 'Approved' : 'Declined'}: ${line(decided)}`);
}

module.exports = { runPlanRequestCommand };
