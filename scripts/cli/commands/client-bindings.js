// @ts-check
/** OAuth client bindings (issue #50, docs/oauth.md): bind an issuer's client to a consumer, unbind it, list them. */
const { parseArgs } = require('node:util');
const { adminClient, adminSettings, answer } = require('../admin');
const { UsageError } = require('../arguments');

/** @typedef {import('../output').Out} Out */

/**
 * `bind NAME --issuer URL --client ID`, `unbind NAME BINDING-ID`, `bindings NAME`.
 * @param {string} verb bind, unbind or bindings
 * @param {string[]} argv the words after the verb
 * @param {NodeJS.ProcessEnv} env
 * @param {Out} out
 */
async function runClientBindingCommand(verb, argv, env, out) {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { issuer: { type: 'string' }, client: { type: 'string' } },
  });
  const [consumer, id, extra] = positionals;
  if (!consumer) throw new UsageError(`${verb} needs the consumer name`);
  const params = { path: { name: consumer } };
  if (verb === 'bind') {
    if (!values.issuer || !values.client) throw new UsageError('bind needs --issuer URL --client CLIENT-ID');
    if (id !== undefined) throw new UsageError(`bind takes one consumer name, not "${id}" too`);
    const api = adminClient(adminSettings(env));
    const bound = await answer(
      api.POST('/consumers/{name}/client-bindings', {
        params,
        body: { issuer: values.issuer, clientId: values.client },
      }),
    );
    out(
      `Bound client "${bound.clientId}" of ${bound.issuer} to "${consumer}" (binding ${bound.id}): its access tokens count on the consumer's limits with its keys.`,
    );
    return;
  }
  if (verb === 'unbind') {
    if (!id) throw new UsageError('unbind needs the consumer name and the binding id (see: bindings NAME)');
    if (extra !== undefined)
      throw new UsageError(`unbind takes a consumer name and one binding id, not "${extra}" too`);
    const api = adminClient(adminSettings(env));
    const removed = await answer(
      api.DELETE('/consumers/{name}/client-bindings/{bindingId}', {
        params: { path: { name: consumer, bindingId: id } },
      }),
    );
    out(
      `Unbound client "${removed.clientId}" of ${removed.issuer} from "${consumer}": every gateway refuses its tokens now.`,
    );
    return;
  }
  if (id !== undefined) throw new UsageError(`bindings takes one consumer name, not "${id}" too`);
  const api = adminClient(adminSettings(env));
  const bindings = await answer(api.GET('/consumers/{name}/client-bindings', { params }));
  out('id\tissuer\tclient\tcreated');
  for (const b of bindings) out(`${b.id}\t${b.issuer}\t${b.clientId}\t${b.createdAt}`);
}

module.exports = { runClientBindingCommand };
