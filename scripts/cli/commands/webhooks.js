// @ts-check
/**
 * Webhook endpoints (docs/webhooks.md): a consumer's, or the fleet-wide ones (--fleet); add (the secret printed
 * once), remove, rotate its secret (the new one printed once; the old one signs beside it for an overlap), the
 * deliveries to one with their attempts, a redelivery, and the endpoints failing across the fleet.
 */
const { parseArgs } = require('node:util');
const { adminClient, adminSettings, answer } = require('../admin');
const { UsageError, nonNegativeInteger, positiveInteger } = require('../arguments');

/** @typedef {import('../admin').AdminSchemas} AdminSchemas */
/** @typedef {import('../output').Out} Out */

/**
 * One endpoint per line: id, owner, url, state, the event types it takes.
 * @param {AdminSchemas['WebhookEndpointResponse']} e
 */
const endpointLine = (e) =>
  `${e.id}\t${e.consumer ?? '(fleet)'}\t${e.url}\t${e.enabled ? (e.failingSince ? `failing since ${e.failingSince}` : 'enabled') : `disabled: ${e.disabledReason ?? ''}`}\t${e.eventTypes ? e.eventTypes.join(',') : 'all events'}${e.description ? `\t${e.description}` : ''}`;

/**
 * One delivery per line, then one indented line per attempt.
 * @param {AdminSchemas['WebhookDeliveryResponse']} d
 */
const deliveryLines = (d) => [
  `${d.id}\t${d.webhookId}\t${d.eventType}\t${d.state}\tattempts ${d.attemptCount}\t${d.createdAt}${d.nextAttemptAt ? `\tnext ${d.nextAttemptAt}` : ''}`,
  ...d.attempts.map(
    (a) => `  #${a.attempt}\t${a.at}\t${a.statusCode ?? '-'}\t${a.latencyMs} ms${a.error ? `\t${a.error}` : ''}`,
  ),
];

/**
 * @param {string[]} argv the words after "webhooks"
 * @param {NodeJS.ProcessEnv} env
 * @param {Out} out
 */
async function runWebhooksCommand(argv, env, out) {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      fleet: { type: 'boolean' },
      url: { type: 'string' },
      events: { type: 'string' },
      description: { type: 'string' },
      limit: { type: 'string' },
      overlap: { type: 'string' },
    },
  });
  const [verb, ...rest] = positionals;
  const api = () => adminClient(adminSettings(env));
  if (verb === 'failing') {
    const { items } = await answer(api().GET('/webhook-endpoints/failing'));
    for (const e of items) out(endpointLine(e));
    if (items.length === 0) out('No webhook endpoint is failing or disabled.');
    return;
  }
  if (!['list', 'add', 'remove', 'rotate', 'deliveries', 'redeliver'].includes(verb ?? ''))
    throw new UsageError(
      `unknown webhooks command "${verb ?? ''}": list, add, remove, rotate, deliveries, redeliver or failing`,
    );
  // The owner: a consumer's name, or --fleet (the operators' endpoints, which get every consumer's events).
  const fleet = values.fleet === true;
  const [consumer, endpointId, deliveryId] = fleet ? [undefined, ...rest] : rest;
  if (!fleet && !consumer) throw new UsageError(`webhooks ${verb} needs the consumer name (or --fleet)`);
  const name = /** @type {string} */ (consumer);
  if (verb === 'list') {
    const { items } = await answer(
      fleet
        ? api().GET('/webhook-endpoints')
        : api().GET('/consumers/{name}/webhook-endpoints', { params: { path: { name } } }),
    );
    for (const e of items) out(endpointLine(e));
    if (items.length === 0) out('No webhook endpoints.');
    return;
  }
  if (verb === 'add') {
    if (!values.url) throw new UsageError('webhooks add needs --url URL');
    const body = {
      url: values.url,
      ...(values.description !== undefined ? { description: values.description } : {}),
      // The admin API checks the types (400 naming the ones it knows).
      ...(values.events ? { eventTypes: /** @type {any} */ (values.events.split(',')) } : {}),
    };
    const created = await answer(
      fleet
        ? api().POST('/webhook-endpoints', { body })
        : api().POST('/consumers/{name}/webhook-endpoints', { params: { path: { name } }, body }),
    );
    out(`Added (audited): ${endpointLine({ ...created, secret: '' })}`);
    out('Its signing secret, shown only now:');
    out(created.secret);
    return;
  }
  if (!endpointId) throw new UsageError(`webhooks ${verb} needs the endpoint id (webhooks list shows them)`);
  const id = endpointId;
  if (verb === 'remove') {
    await answer(
      fleet
        ? api().DELETE('/webhook-endpoints/{id}', { params: { path: { id } } })
        : api().DELETE('/consumers/{name}/webhook-endpoints/{id}', { params: { path: { name, id } } }),
    );
    out(`Removed webhook endpoint ${id} and its deliveries (audited).`);
    return;
  }
  if (verb === 'rotate') {
    const overlap = nonNegativeInteger(values.overlap, '--overlap');
    // {}: the API's default overlap (24 hours); 0: the old secret stops signing now.
    const body = overlap === undefined ? {} : { overlapSeconds: overlap };
    const rotated = await answer(
      fleet
        ? api().POST('/webhook-endpoints/{id}/rotate-secret', { params: { path: { id } }, body })
        : api().POST('/consumers/{name}/webhook-endpoints/{id}/rotate-secret', {
            params: { path: { name, id } },
            body,
          }),
    );
    out(
      rotated.previousSecretSignsUntil
        ? `Rotated (audited): the old secret also signs every delivery until ${rotated.previousSecretSignsUntil}.`
        : 'Rotated (audited): the old secret no longer signs.',
    );
    out('The new signing secret, shown only now:');
    out(rotated.secret);
    return;
  }
  if (verb === 'redeliver') {
    // The path names the endpoint: a delivery to any other endpoint is the admin API's 404.
    if (!deliveryId) throw new UsageError('webhooks redeliver needs the delivery id (webhooks deliveries lists them)');
    const path = { id, deliveryId };
    const delivery = await answer(
      fleet
        ? api().POST('/webhook-endpoints/{id}/deliveries/{deliveryId}/redeliver', { params: { path } })
        : api().POST('/consumers/{name}/webhook-endpoints/{id}/deliveries/{deliveryId}/redeliver', {
            params: { path: { name, ...path } },
          }),
    );
    out(`Redelivering (audited), the same webhook-id: ${deliveryLines(delivery)[0]}`);
    return;
  }
  const limit = positiveInteger(values.limit, '--limit') ?? 20;
  const query = { limit };
  const page = await answer(
    fleet
      ? api().GET('/webhook-endpoints/{id}/deliveries', { params: { path: { id }, query } })
      : api().GET('/consumers/{name}/webhook-endpoints/{id}/deliveries', { params: { path: { name, id }, query } }),
  );
  for (const d of page.items) for (const line of deliveryLines(d)) out(line);
  if (page.items.length === 0) out('No deliveries yet.');
}

module.exports = { runWebhooksCommand };
