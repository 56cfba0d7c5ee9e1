// @ts-check
/** The consumers and their keys: create, list, issue, revoke, rotate, disable, enable, plan, unban; usage, import, export. */
const { parseArgs } = require('node:util');
const { adminClient, adminSettings, answer } = require('../admin');
const { UsageError, positiveInteger } = require('../arguments');
const { readPlans } = require('../catalogue');
const { figures, keyLines, listLine } = require('../output');
const { exportConsumers, importConsumers, PAGE } = require('./consumers-file');
const { usageCommand } = require('./usage');

/** @typedef {import('../admin').AdminClient} AdminClient */
/** @typedef {import('../output').Out} Out */

/** @param {string[]} argv */
const parseConsumerArgs = (argv) =>
  parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      plan: { type: 'string' },
      name: { type: 'string' },
      rpm: { type: 'string' },
      rpd: { type: 'string' },
      expires: { type: 'string' },
      key: { type: 'string' },
      overlap: { type: 'string' },
      history: { type: 'boolean' },
      top: { type: 'boolean' },
      export: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      granularity: { type: 'string' },
      by: { type: 'string' },
      limit: { type: 'string' },
    },
  });

/** @typedef {ReturnType<typeof parseConsumerArgs>['values']} ConsumerFlags */

/**
 * --rpm and --rpd, checked against the plan: together or not at all, and required by a "custom" plan.
 * @param {ConsumerFlags} values
 * @param {Record<string, unknown> | undefined} plans
 * @param {string} plan
 * @returns {{ perMinute: number, perDay: number } | undefined}
 */
function agreedLimits(values, plans, plan) {
  const rpm = positiveInteger(values.rpm, '--rpm');
  const rpd = positiveInteger(values.rpd, '--rpd');
  if ((rpm === undefined) !== (rpd === undefined)) throw new UsageError('--rpm and --rpd go together');
  if (plans?.[plan] === 'custom' && rpm === undefined)
    throw new UsageError(`the ${plan} plan needs its agreed limits: --rpm N --rpd N`);
  return rpm && rpd ? { perMinute: rpm, perDay: rpd } : undefined;
}

/**
 * The key to rotate: the one named by --key, else the consumer's one active key that has not been rotated yet
 * (a predecessor still in its overlap cannot be rotated again). With several, the CLI does not guess: it names
 * them and asks for --key.
 * @param {AdminClient} api
 * @param {string} consumerName
 * @param {string | undefined} keyId
 * @returns {Promise<string>}
 */
async function pickKey(api, consumerName, keyId) {
  if (keyId) return keyId;
  const consumer = await answer(api.GET('/consumers/{name}', { params: { path: { name: consumerName } } }));
  const active = consumer.keys.filter((k) => k.state === 'active');
  if (active.length === 0) throw new UsageError(`"${consumerName}" has no active key`);
  const rotatable = active.filter((k) => !k.replacedBy);
  if (rotatable.length === 0)
    throw new UsageError(`"${consumerName}" has no key left to rotate: its active keys were rotated already`);
  if (rotatable.length > 1) {
    const ids = rotatable.map((k) => `${k.id} (${k.hint}${k.expiresAt ? `, until ${k.expiresAt}` : ''})`).join(', ');
    throw new UsageError(
      `"${consumerName}" has ${rotatable.length} active keys: ${ids}. Say which to rotate with --key KEY-ID.`,
    );
  }
  return rotatable[0].id;
}

/**
 * @param {string[]} argv
 * @param {NodeJS.ProcessEnv} env
 * @param {Out} out
 */
async function runConsumerCommand(argv, env, out) {
  const { positionals, values } = parseConsumerArgs(argv);
  const [command, ...rest] = positionals;
  const admin = () => adminSettings(env);
  const api = () => adminClient(admin());
  /** @param {string} name */
  const consumerPath = (name) => ({ params: { path: { name } } });

  switch (command) {
    case 'create': {
      const plan = values.plan;
      const plans = readPlans(env);
      if (!plan) throw new UsageError('--plan is needed');
      if (plans && !Object.hasOwn(plans, plan))
        throw new UsageError(`--plan must be one of ${Object.keys(plans).join(', ')}`);
      const limits = agreedLimits(values, plans, plan);
      /** @type {import('../admin').AdminSchemas['CreateConsumerDto']} */
      const body = {
        plan: /** @type {import('../admin').AdminSchemas['CreateConsumerDto']['plan']} */ (plan),
        ...(values.name ? { name: values.name } : {}),
        ...(limits ? { limits } : {}),
      };
      if (values.expires) body.expiresAt = values.expires;
      const created = await answer(api().POST('/consumers', { body }));
      out(`Created consumer "${created.consumer.name}" on the ${plan} plan. The key is shown only now:`);
      out(created.key.key);
      return;
    }
    case 'list': {
      const client = api();
      /** @type {string | undefined} */
      let after;
      let count = 0;
      do {
        const page = await answer(client.GET('/consumers', { params: { query: { limit: PAGE, after } } }));
        for (const consumer of page.items) {
          out(listLine(consumer));
          for (const line of keyLines(consumer)) out(line);
        }
        count += page.items.length;
        after = page.next ?? undefined;
      } while (after);
      if (count === 0) out('No consumers.');
      return;
    }
    case 'issue': {
      const consumer = rest[0];
      if (!consumer) throw new UsageError('issue needs the consumer name');
      const issued = await answer(
        api().POST('/consumers/{name}/keys', {
          ...consumerPath(consumer),
          body: values.expires ? { expiresAt: values.expires } : {},
        }),
      );
      const until = issued.expiresAt ? `it expires ${issued.expiresAt}` : 'it does not expire';
      out(
        `Issued another key to "${consumer}" (key ${issued.id}; ${until}); its other keys keep working. The key is shown only now:`,
      );
      out(issued.key);
      return;
    }
    case 'disable':
    case 'enable': {
      const consumer = rest[0];
      if (!consumer) throw new UsageError(`${command} needs the consumer name`);
      const client = api();
      await answer(
        command === 'disable'
          ? client.POST('/consumers/{name}/disable', consumerPath(consumer))
          : client.POST('/consumers/{name}/enable', consumerPath(consumer)),
      );
      out(
        command === 'disable'
          ? `Disabled "${consumer}": every gateway refuses its keys now (they are kept).`
          : `Enabled "${consumer}": its active keys work again.`,
      );
      return;
    }
    case 'plan': {
      const [consumer, plan] = rest;
      if (!consumer) throw new UsageError('plan needs the consumer name and the plan');
      const plans = readPlans(env);
      if (!plan) throw new UsageError('plan needs the consumer name and the plan');
      if (plans && !Object.hasOwn(plans, plan))
        throw new UsageError(`PLAN must be one of ${Object.keys(plans).join(', ')}`);
      const limits = agreedLimits(values, plans, plan);
      // Without --rpm/--rpd, the plan's own limits (the consumer's are cleared).
      const changed = await answer(
        api().PATCH('/consumers/{name}', {
          ...consumerPath(consumer),
          body: {
            plan: /** @type {import('../admin').AdminSchemas['UpdateConsumerDto']['plan']} */ (plan),
            limits: limits ?? null,
          },
        }),
      );
      out(
        `"${changed.name}" is on the ${changed.plan} plan: ${figures(changed.effectiveLimits)}${changed.limits ? ' (its own limits)' : ''}.`,
      );
      return;
    }
    case 'revoke': {
      const consumer = rest[0];
      if (!consumer) throw new UsageError('revoke needs the consumer name');
      const client = api();
      const revoked = values.key
        ? await answer(
            client.POST('/consumers/{name}/keys/{keyId}/revoke', {
              params: { path: { name: consumer, keyId: values.key } },
            }),
          )
        : await answer(client.POST('/consumers/{name}/revoke', consumerPath(consumer)));
      if (revoked.length === 0)
        throw new UsageError(`"${consumer}" has no unrevoked key${values.key ? ` ${values.key}` : ''}`);
      out(`Revoked ${revoked.length} key(s) of "${consumer}". Every gateway refuses them now.`);
      return;
    }
    case 'rotate': {
      const consumer = rest[0];
      if (!consumer) throw new UsageError('rotate needs the consumer name');
      const overlap =
        values.overlap === undefined
          ? undefined
          : values.overlap === '0'
            ? 0
            : positiveInteger(values.overlap, '--overlap');
      const client = api();
      const keyId = await pickKey(client, consumer, values.key);
      const rotated = await answer(
        client.POST('/consumers/{name}/keys/{keyId}/rotate', {
          params: { path: { name: consumer, keyId } },
          // {}: the API's default overlap (the generated type requires overlapSeconds because it has a default).
          body: overlap === undefined ? {} : { overlapSeconds: overlap },
        }),
      );
      out(
        `Rotated ${rotated.previous.hint} of "${consumer}": it keeps working until ${rotated.previous.expiresAt}. The new key is shown only now:`,
      );
      out(rotated.key.key);
      return;
    }
    case 'usage':
      return usageCommand(admin, rest[0], values, out);
    case 'unban': {
      const consumer = rest[0];
      if (!consumer) throw new UsageError('unban needs the consumer name');
      const usage = await answer(api().POST('/consumers/{name}/unban', consumerPath(consumer)));
      out(`Unbanned "${usage.consumer}" on every gateway: its ban and strikes are gone (its windows keep counting).`);
      return;
    }
    case 'import': {
      const file = rest[0];
      if (!file) throw new UsageError('import needs the consumers file');
      return importConsumers(api, file, out);
    }
    case 'export':
      return exportConsumers(api(), rest[0], out);
    default:
      throw new UsageError(command ? `unknown command "${command}"` : 'a command is needed');
  }
}

module.exports = { runConsumerCommand };
