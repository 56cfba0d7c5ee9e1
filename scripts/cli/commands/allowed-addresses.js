// @ts-check
/** Where a consumer's credentials may be used from (issue #50, point 5, docs/oauth.md): `allow`. */
const { parseArgs } = require('node:util');
const { adminClient, adminSettings, answer } = require('../admin');
const { UsageError } = require('../arguments');

/** @typedef {import('../output').Out} Out */

/**
 * `allow NAME [--key KEY-ID | --binding BINDING-ID] RANGE...` or `... --anywhere`: the consumer's (or one key's or
 * client binding's) allowed addresses, set whole.
 * @param {string[]} argv the words after the verb
 * @param {NodeJS.ProcessEnv} env
 * @param {Out} out
 */
async function runAllowCommand(argv, env, out) {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { key: { type: 'string' }, binding: { type: 'string' }, anywhere: { type: 'boolean' } },
  });
  const [consumer, ...ranges] = positionals;
  if (!consumer) throw new UsageError('allow needs the consumer name');
  if (values.key && values.binding) throw new UsageError('allow takes --key or --binding, not both');
  if (values.anywhere === ranges.length > 0)
    throw new UsageError('allow needs the addresses or CIDR ranges (10.1.0.0/16 2001:db8::/32), or --anywhere');
  const allowedAddresses = values.anywhere ? null : ranges;
  const api = adminClient(adminSettings(env));
  const where = (/** @type {string[] | null} */ list) => (list ? `only from ${list.join(', ')}` : 'from anywhere');
  if (values.key) {
    const key = await answer(
      api.PATCH('/consumers/{name}/keys/{keyId}', {
        params: { path: { name: consumer, keyId: values.key } },
        body: { allowedAddresses },
      }),
    );
    out(`Key ${key.hint} of "${consumer}" may be used ${where(key.allowedAddresses)} (within the consumer's own).`);
    return;
  }
  if (values.binding) {
    const binding = await answer(
      api.PATCH('/consumers/{name}/client-bindings/{bindingId}', {
        params: { path: { name: consumer, bindingId: values.binding } },
        body: { allowedAddresses },
      }),
    );
    out(
      `Client "${binding.clientId}" of "${consumer}" may be used ${where(binding.allowedAddresses)} (within the consumer's own).`,
    );
    return;
  }
  const changed = await answer(
    api.PATCH('/consumers/{name}', { params: { path: { name: consumer } }, body: { allowedAddresses } }),
  );
  out(`"${consumer}"'s keys and tokens may be used ${where(changed.allowedAddresses)}.`);
}

module.exports = { runAllowCommand };
