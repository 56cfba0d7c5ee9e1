#!/usr/bin/env node
/**
 * `npm run -s keys -- <command>`: the consumers and keys CLI, a client of a running gateway's admin API
 * (ADMIN_URL, ADMIN_TOKEN). A plain Node script: nothing is built per call.
 */
const { createWriteStream, readFileSync, writeFileSync, renameSync, rmSync } = require('node:fs');
const { Readable } = require('node:stream');
const { pipeline } = require('node:stream/promises');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { URLSearchParams } = require('node:url');

/**
 * The plans of the file the gateway reads (PLANS_FILE, relative to the working directory as for the gateway;
 * default gateway/plans.json of this checkout): name -> limits, or "custom" where each consumer carries its own.
 * Undefined where it cannot be read: the CLI may run apart from the gateway's files, and the admin API checks
 * the plan anyway (400).
 */
function readPlans(env) {
  const file = env.PLANS_FILE ? path.resolve(env.PLANS_FILE) : path.join(__dirname, '..', 'gateway', 'plans.json');
  try {
    const { plans } = JSON.parse(readFileSync(file, 'utf8'));
    return plans && typeof plans === 'object' ? plans : undefined;
  } catch {
    return undefined;
  }
}

const usage = (plans) => `Usage:
  npm run -s keys -- create --plan ${plans ? Object.keys(plans).join('|') : 'PLAN'} [--name NAME] [--rpm N --rpd N] [--expires ISO-DATE]
  npm run -s keys -- list
  npm run -s keys -- issue NAME [--expires ISO-DATE]
  npm run -s keys -- revoke NAME [--key KEY-ID]
  npm run -s keys -- rotate NAME [--key KEY-ID] [--overlap SECONDS]
  npm run -s keys -- disable NAME
  npm run -s keys -- enable NAME
  npm run -s keys -- plan NAME free|pro|business|enterprise [--rpm N --rpd N]
  npm run -s keys -- usage NAME
  npm run -s keys -- usage NAME --history [--from ISO --to ISO] [--granularity hour|day]
  npm run -s keys -- usage --top [--by requests|rateLimited|serverErrors] [--limit N] [--from ISO --to ISO]
  npm run -s keys -- usage --export FILE [--from ISO --to ISO] [--granularity day|hour]
  npm run -s keys -- unban NAME
  npm run -s keys -- import FILE
  npm run -s keys -- export [FILE]

A client of the gateway's admin API: ADMIN_URL (default: the address a gateway started in development wrote
beside its token, .data/admin-url; else http://127.0.0.1:$ADMIN_PORT, port 3002) and ADMIN_TOKEN (default: the
development token in ADMIN_TOKEN_FILE, .data/admin-token). The plans are those of PLANS_FILE (default
gateway/plans.json); a "custom" one needs --rpm and --rpd. "create", "issue" and "rotate" print the new key as
the last line: it is shown only this once. "list" shows each consumer's active keys with their ids (for --key);
"rotate" without --key needs the consumer to have one key to rotate. "plan" without --rpm/--rpd puts the
consumer on the plan's own limits. import/export use the consumers-file format ({"consumers": [...]}, key
hashes only); import is idempotent. "usage NAME" shows the current rate-limit windows; --history the UTC hours
(default: the last 24) or days (the last 30) kept in the database; --top ranks the consumers (default: the last
30 days); --export writes the CSV (default: a line per consumer and UTC day of the last 30 days).`;

/**
 * The admin scopes, from the committed admin API document (gateway/admin-openapi.json, generated from the
 * gateway's own list): the help never lists fewer than the gateway accepts.
 */
function adminScopes() {
  try {
    const document = JSON.parse(readFileSync(path.join(__dirname, '..', 'gateway', 'admin-openapi.json'), 'utf8'));
    return document.components.schemas.CreateAdminTokenDto.properties.scopes.items.enum;
  } catch {
    return undefined;
  }
}

const IMPORT_BATCH = 500;
const EXPORT_PAGE = 1000;

class UsageError extends Error {}

function positiveInteger(value, flag) {
  if (value === undefined) return undefined;
  if (!/^[1-9][0-9]*$/.test(value) || !Number.isSafeInteger(Number(value)))
    throw new UsageError(`${flag} must be a positive integer`);
  return Number(value);
}

/**
 * The address a gateway started in development wrote beside its admin token (ADMIN_TOKEN_FILE's folder,
 * .data/admin-url): the admin API of the `npm start` this CLI runs beside, whatever its ADMIN_PORT.
 */
function developmentAdminUrl(env) {
  try {
    const url = readFileSync(
      path.join(path.dirname(env.ADMIN_TOKEN_FILE || '.data/admin-token'), 'admin-url'),
      'utf8',
    ).trim();
    return /^https?:\/\/[^\s]+$/.test(url) ? url : undefined;
  } catch {
    return undefined;
  }
}

function adminSettings(env) {
  const url = (env.ADMIN_URL || developmentAdminUrl(env) || `http://127.0.0.1:${env.ADMIN_PORT || 3002}`).replace(
    /\/+$/,
    '',
  );
  let token = env.ADMIN_TOKEN;
  if (!token) {
    const file = env.ADMIN_TOKEN_FILE || '.data/admin-token';
    try {
      token = readFileSync(file, 'utf8').trim();
    } catch {
      throw new Error(
        `no admin token: set ADMIN_TOKEN (or start the gateway in development once, which writes ${file})`,
      );
    }
  }
  return { url, token };
}

/** One admin API call; an Error body becomes an Error with its message. */
/**
 * Sends one admin API call and returns its Response once it answered 2xx; an unreachable API or an error answer
 * is thrown with the API's own message. `timeoutMs`: how long the whole call may take.
 */
async function send(admin, method, route, body, timeoutMs = 30_000) {
  let response;
  try {
    response = await fetch(`${admin.url}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${admin.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: globalThis.AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    throw new Error(
      `cannot reach the admin API at ${admin.url} (${error.cause?.code ?? error.message}): is the gateway running? (ADMIN_URL, or the address a development gateway writes to .data/admin-url)`,
      {
        cause: error,
      },
    );
  }
  if (!response.ok)
    throw new Error(parseJson(await response.text())?.message ?? `${method} ${route} answered ${response.status}`);
  return response;
}

function parseJson(text) {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/** One admin API call and its JSON answer. */
async function request(admin, method, route, body) {
  return parseJson(await (await send(admin, method, route, body)).text());
}

const name = (value) => encodeURIComponent(value);

function figures(limits) {
  return limits ? `${limits.perMinute}/min ${limits.perDay}/day` : 'no limits';
}

/** One line per consumer, as the file-based CLI printed it: name, plan, limits, hint, created, state. */
function listLine(consumer) {
  const current =
    [...consumer.keys].reverse().find((k) => k.state === 'active') ?? consumer.keys[consumer.keys.length - 1];
  let state;
  if (consumer.disabledAt) state = `disabled ${consumer.disabledAt}`;
  else if (current?.state === 'revoked') state = `revoked ${current.revokedAt}`;
  else if (current?.state === 'expired') state = `expired ${current.expiresAt}`;
  else state = current?.expiresAt ? `active until ${current.expiresAt}` : 'active';
  const others = consumer.keys.filter((k) => k.state === 'active').length - (current?.state === 'active' ? 1 : 0);
  return `${consumer.name}\t${consumer.plan}\t${figures(consumer.effectiveLimits)}\t${current?.hint ?? '-'}\tcreated ${consumer.createdAt}\t${state}${others > 0 ? ` (+${others} more active key${others > 1 ? 's' : ''})` : ''}`;
}

/** Under each consumer's line, one line per active key: its id (what --key takes), hint and state. */
function keyLines(consumer) {
  return consumer.keys
    .filter((k) => k.state === 'active')
    .map(
      (k) =>
        `  key ${k.id}\t${k.hint}\tactive${k.expiresAt ? ` until ${k.expiresAt}` : ''}${k.replacedBy ? ` (rotated: its successor is key ${k.replacedBy})` : ''}`,
    );
}

/**
 * The key to rotate: the one named by --key, else the consumer's one active key that has not been rotated yet
 * (a predecessor still in its overlap cannot be rotated again). With several, the CLI does not guess: it names
 * them and asks for --key.
 */
async function pickKey(admin, consumerName, keyId) {
  if (keyId) return keyId;
  const consumer = await request(admin, 'GET', `/consumers/${name(consumerName)}`);
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

function readConsumersFile(file) {
  let parsed;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`${file}: ${error.code === 'ENOENT' ? 'no such file' : error.message}`);
  }
  if (!parsed || !Array.isArray(parsed.consumers)) throw new UsageError(`${file}: expected {"consumers": [...]}`);
  return parsed.consumers;
}

/** Every usage line of the CLI, and the paragraphs that explain them. */
const helpText = (env) => `${usage(readPlans(env))}\n\n${tokenAuditUsage()}\n\n${PLAN_REQUEST_USAGE}`;

/** `--help` for one verb: its usage lines (the verb's own), then where the rest is. */
function verbHelp(verb, env) {
  const lines = helpText(env)
    .split('\n')
    .filter((line) => new RegExp(`^  npm run -s keys -- ${verb}( |$)`).test(line));
  if (lines.length === 0) return undefined;
  return `Usage:\n${lines.join('\n')}\n\nEvery command: npm run -s keys -- --help`;
}

async function runKeysCommand(argv, env, out) {
  const asksHelp = argv.includes('--help') || argv.includes('-h');
  const verb = argv.find((arg) => !arg.startsWith('-'));
  if (argv.length === 0 || asksHelp || verb === 'help') {
    const text = verb && verb !== 'help' ? verbHelp(verb, env) : helpText(env);
    if (text === undefined) throw new UsageError(`unknown command "${verb}"`);
    for (const line of text.split('\n')) out(line);
    return;
  }
  if (argv[0] === 'token' || argv[0] === 'audit') return runTokenAuditCommand(argv, env, out);
  if (argv[0] === 'requests') return runPlanRequestCommand(argv.slice(1), env, out);
  const { positionals, values } = parseArgs({
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
  const [command, ...rest] = positionals;
  const admin = () => adminSettings(env);

  switch (command) {
    case 'create': {
      const plan = values.plan;
      const plans = readPlans(env);
      if (!plan) throw new UsageError('--plan is needed');
      if (plans && !Object.hasOwn(plans, plan))
        throw new UsageError(`--plan must be one of ${Object.keys(plans).join(', ')}`);
      const rpm = positiveInteger(values.rpm, '--rpm');
      const rpd = positiveInteger(values.rpd, '--rpd');
      if ((rpm === undefined) !== (rpd === undefined)) throw new UsageError('--rpm and --rpd go together');
      if (plans?.[plan] === 'custom' && rpm === undefined)
        throw new UsageError(`the ${plan} plan needs its agreed limits: --rpm N --rpd N`);
      const body = {
        plan,
        ...(values.name ? { name: values.name } : {}),
        ...(rpm ? { limits: { perMinute: rpm, perDay: rpd } } : {}),
      };
      if (values.expires) body.expiresAt = values.expires;
      const created = await request(admin(), 'POST', '/consumers', body);
      out(`Created consumer "${created.consumer.name}" on the ${plan} plan. The key is shown only now:`);
      out(created.key.key);
      return;
    }
    case 'list': {
      const settings = admin();
      let after;
      let count = 0;
      do {
        const page = await request(
          settings,
          'GET',
          `/consumers?limit=${EXPORT_PAGE}${after ? `&after=${name(after)}` : ''}`,
        );
        for (const consumer of page.items) {
          out(listLine(consumer));
          for (const line of keyLines(consumer)) out(line);
        }
        count += page.items.length;
        after = page.next;
      } while (after);
      if (count === 0) out('No consumers.');
      return;
    }
    case 'issue': {
      const consumer = rest[0];
      if (!consumer) throw new UsageError('issue needs the consumer name');
      const issued = await request(
        admin(),
        'POST',
        `/consumers/${name(consumer)}/keys`,
        values.expires ? { expiresAt: values.expires } : {},
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
      await request(admin(), 'POST', `/consumers/${name(consumer)}/${command}`);
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
      const rpm = positiveInteger(values.rpm, '--rpm');
      const rpd = positiveInteger(values.rpd, '--rpd');
      if ((rpm === undefined) !== (rpd === undefined)) throw new UsageError('--rpm and --rpd go together');
      if (plans?.[plan] === 'custom' && rpm === undefined)
        throw new UsageError(`the ${plan} plan needs its agreed limits: --rpm N --rpd N`);
      // Without --rpm/--rpd, the plan's own limits (the consumer's are cleared).
      const changed = await request(admin(), 'PATCH', `/consumers/${name(consumer)}`, {
        plan,
        limits: rpm ? { perMinute: rpm, perDay: rpd } : null,
      });
      out(
        `"${changed.name}" is on the ${changed.plan} plan: ${figures(changed.effectiveLimits)}${changed.limits ? ' (its own limits)' : ''}.`,
      );
      return;
    }
    case 'revoke': {
      const consumer = rest[0];
      if (!consumer) throw new UsageError('revoke needs the consumer name');
      const route = values.key
        ? `/consumers/${name(consumer)}/keys/${name(values.key)}/revoke`
        : `/consumers/${name(consumer)}/revoke`;
      const revoked = await request(admin(), 'POST', route);
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
      const settings = admin();
      const keyId = await pickKey(settings, consumer, values.key);
      const rotated = await request(
        settings,
        'POST',
        `/consumers/${name(consumer)}/keys/${name(keyId)}/rotate`,
        overlap === undefined ? {} : { overlapSeconds: overlap },
      );
      out(
        `Rotated ${rotated.previous.hint} of "${consumer}": it keeps working until ${rotated.previous.expiresAt}. The new key is shown only now:`,
      );
      out(rotated.key.key);
      return;
    }
    case 'usage': {
      const consumer = rest[0];
      if (values.top || values.export !== undefined) return usageFleet(admin(), values, out);
      if (!consumer) throw new UsageError('usage needs the consumer name');
      if (values.history) return usageHistory(admin(), consumer, values, out);
      const usage = await request(admin(), 'GET', `/consumers/${name(consumer)}/usage`);
      for (const w of usage.windows)
        out(`${w.name}\t${w.used}/${w.limit} used\t${w.remaining} remaining\tresets in ${w.resetSeconds}s`);
      out(usage.banned ? `banned for ${usage.banSecondsLeft}s more` : 'not banned');
      return;
    }
    case 'unban': {
      const consumer = rest[0];
      if (!consumer) throw new UsageError('unban needs the consumer name');
      const usage = await request(admin(), 'POST', `/consumers/${name(consumer)}/unban`);
      out(`Unbanned "${usage.consumer}" on every gateway: its ban and strikes are gone (its windows keep counting).`);
      return;
    }
    case 'import': {
      const file = rest[0];
      if (!file) throw new UsageError('import needs the consumers file');
      const consumers = readConsumersFile(file);
      const settings = admin();
      const total = { created: 0, updated: 0, unchanged: 0 };
      for (let i = 0; i < consumers.length; i += IMPORT_BATCH) {
        const result = await request(settings, 'POST', '/import', { consumers: consumers.slice(i, i + IMPORT_BATCH) });
        for (const field of Object.keys(total)) total[field] += result[field];
      }
      out(
        `Imported ${consumers.length} consumer(s) from ${file}: ${total.created} created, ${total.updated} updated, ${total.unchanged} unchanged.`,
      );
      return;
    }
    case 'export': {
      const settings = admin();
      const consumers = [];
      let after;
      do {
        const page = await request(
          settings,
          'GET',
          `/export?limit=${EXPORT_PAGE}${after ? `&after=${name(after)}` : ''}`,
        );
        consumers.push(...page.consumers);
        after = page.next;
      } while (after);
      const text = `${JSON.stringify({ consumers }, null, 2)}\n`;
      const file = rest[0];
      if (!file) {
        process.stdout.write(text);
        return;
      }
      const temporary = `${file}.${process.pid}.tmp`;
      writeFileSync(temporary, text, { mode: 0o600 });
      renameSync(temporary, file);
      out(`Exported ${consumers.length} consumer(s) to ${path.resolve(file)} (key hashes only).`);
      return;
    }
    default:
      throw new UsageError(command ? `unknown command "${command}"` : 'a command is needed');
  }
}

// --- usage history (issue #23): a consumer's hours or days, the ranking, the CSV ----------------------------------

/** The query string of a usage call: only the flags given (the admin API applies its own defaults). */
function usageQuery(values, names) {
  const query = new URLSearchParams();
  for (const key of names) if (values[key] !== undefined) query.set(key, values[key]);
  const text = query.toString();
  return text ? `?${text}` : '';
}

const ms = (value) => (value === null ? '-' : `${value}ms`);

/** One line per bucket (start, answers by outcome, latency), then the totals. */
async function usageHistory(settings, consumer, values, out) {
  const history = await request(
    settings,
    'GET',
    `/consumers/${name(consumer)}/usage/history${usageQuery(values, ['from', 'to', 'granularity'])}`,
  );
  out(`${history.consumer}, by ${history.granularity} (UTC)`);
  out('start\trequests\tok\t4xx\t429\t5xx\tp50\tp95');
  const total = { requests: 0, ok: 0, clientErrors: 0, rateLimited: 0, serverErrors: 0 };
  for (const b of history.buckets) {
    out(
      `${b.start}\t${b.requests}\t${b.ok}\t${b.clientErrors}\t${b.rateLimited}\t${b.serverErrors}\t${ms(b.p50Ms)}\t${ms(b.p95Ms)}`,
    );
    for (const field of Object.keys(total)) total[field] += b[field];
  }
  out(`total\t${total.requests}\t${total.ok}\t${total.clientErrors}\t${total.rateLimited}\t${total.serverErrors}`);
}

/** --top: the consumers ranked; --export FILE: the CSV, streamed to a file (written whole, then renamed). */
async function usageFleet(settings, values, out) {
  if (values.top) {
    const top = await request(settings, 'GET', `/usage/top${usageQuery(values, ['from', 'to', 'by', 'limit'])}`);
    out(`Top consumers by ${top.by}, ${top.from} to ${top.to} (UTC)`);
    out('consumer\trequests\tok\t4xx\t429\t5xx\tp50\tp95');
    for (const c of top.consumers)
      out(
        `${c.consumer}\t${c.requests}\t${c.ok}\t${c.clientErrors}\t${c.rateLimited}\t${c.serverErrors}\t${ms(c.p50Ms)}\t${ms(c.p95Ms)}`,
      );
    if (top.consumers.length === 0) out('(no answers in this range)');
    return;
  }
  const file = values.export;
  if (!file) throw new UsageError('--export needs a file name');
  const route = `/usage/export${usageQuery(values, ['from', 'to', 'granularity'])}`;
  const response = await send(settings, 'GET', route, undefined, 600_000);
  const temporary = `${file}.${process.pid}.tmp`;
  let lines = 0;
  const body = Readable.fromWeb(response.body);
  body.on('data', (chunk) => (lines += chunk.toString('utf8').split('\n').length - 1));
  try {
    await pipeline(body, createWriteStream(temporary, { mode: 0o600 }));
  } catch (error) {
    rmSync(temporary, { force: true }); // a cut stream leaves no half file behind
    throw error;
  }
  renameSync(temporary, file);
  out(`Exported ${Math.max(0, lines - 1)} line(s) of usage to ${path.resolve(file)}.`);
}

// --- token and audit commands (issue #24): scoped admin tokens and the audit log -------------------------------

/** Built when help is asked for: the scopes are read from a 170 KB document no other command needs. */
const tokenAuditUsage = () => `Admin tokens and the audit log (ADMIN_TOKEN, or a token with tokens:admin / audit:read):
  npm run -s keys -- token create --name NAME --scopes SCOPE,SCOPE [--expires ISO-DATE] [--own] [--plans free,pro]
  npm run -s keys -- token create --for portal [--name NAME] [--expires ISO-DATE]
  npm run -s keys -- token list
  npm run -s keys -- token revoke TOKEN-ID
  npm run -s keys -- audit [--from ISO] [--to ISO] [--actor NAME|ID] [--target NAME|ID] [--action ACTION] [--limit N] [--order desc|asc]

Scopes: ${(adminScopes() ?? ['see gateway/admin-openapi.json']).join(', ')}.
"token create" prints the token as its last line: it is shown only this once. "--for portal" gives the portal's
scopes, its own consumers, the Free plan and actsForUsers (the audit names the developer behind each call; root only). "audit" shows the newest rows first
(--order asc: the oldest first), as the console does.`;

const PLAN_REQUEST_USAGE = `Plan requests (a token with plan-requests:read to list, plan-requests:review to decide):
  npm run -s keys -- requests [--status pending|approved|declined] [--consumer NAME]
  npm run -s keys -- requests approve REQUEST-ID [--note TEXT]
  npm run -s keys -- requests decline REQUEST-ID --note TEXT

"requests" lists the plan requests, the pending ones by default (oldest first, as they wait); "approve" moves the
consumer to the plan it asked for (its own limits for a custom plan need the console), "decline" tells the
requester why, on the portal.`;

/**
 * What a job's token holds (docs/admin-tokens.md): `--for portal` is the self-service front end's, which names the
 * developer behind each call in the audit (actsForUsers: only root may grant it).
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
    ],
    ownConsumersOnly: true,
    plans: ['free'],
    actsForUsers: true,
  },
};

const list = (value) =>
  value
    ? value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean)
    : undefined;

async function runTokenAuditCommand(argv, env, out) {
  const { positionals, values } = parseArgs({
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
  const [command, verb, ...rest] = positionals;
  const settings = adminSettings(env);
  if (command === 'audit') {
    const limit = positiveInteger(values.limit, '--limit');
    const order = values.order ?? 'desc';
    if (!['asc', 'desc'].includes(order)) throw new UsageError('--order must be desc (newest first) or asc');
    const query = new URLSearchParams({ order });
    for (const field of ['from', 'to', 'actor', 'target', 'action']) if (values[field]) query.set(field, values[field]);
    let after;
    let shown = 0;
    do {
      const pageSize = Math.min(EXPORT_PAGE, limit === undefined ? EXPORT_PAGE : limit - shown);
      const page = await request(settings, 'GET', `/audit?${query}&limit=${pageSize}${after ? `&after=${after}` : ''}`);
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
      after = page.next;
    } while (after && (limit === undefined || shown < limit));
    if (shown === 0) out('No audit rows.');
    return;
  }
  switch (verb) {
    case 'create': {
      const preset = values.for === undefined ? undefined : TOKEN_PRESETS[values.for];
      if (values.for !== undefined && !preset)
        throw new UsageError(`--for must be one of ${Object.keys(TOKEN_PRESETS).join(', ')}`);
      const name = values.name ?? values.for;
      if (!name) throw new UsageError('token create needs --name NAME (or --for portal)');
      const scopes = list(values.scopes) ?? preset?.scopes;
      if (!scopes || scopes.length === 0) throw new UsageError('token create needs --scopes a,b (or --for portal)');
      const plans = list(values.plans) ?? preset?.plans;
      const body = {
        name,
        scopes,
        ownConsumersOnly: values.own ?? preset?.ownConsumersOnly ?? false,
        ...(plans ? { plans } : {}),
        ...(preset?.actsForUsers ? { actsForUsers: true } : {}),
      };
      if (values.expires) body.expiresAt = values.expires;
      const created = await request(settings, 'POST', '/tokens', body);
      const r = created.record;
      out(
        `Created admin token "${r.name}" (${r.id}): ${r.scopes.join(', ')}${r.ownConsumersOnly ? ', own consumers only' : ''}${r.plans ? `, plans ${r.plans.join(', ')}` : ''}${r.actsForUsers ? ', acts for users' : ''}${r.expiresAt ? `, expires ${r.expiresAt}` : ''}. The token is shown only now:`,
      );
      out(created.token);
      return;
    }
    case 'list': {
      const tokens = await request(settings, 'GET', '/tokens');
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
      const revoked = await request(settings, 'POST', `/tokens/${encodeURIComponent(id)}/revoke`);
      out(`Revoked admin token "${revoked.name}" (${revoked.id}). Every gateway refuses it within a second.`);
      return;
    }
    default:
      throw new UsageError(verb ? `unknown token command "${verb}"` : 'token needs create, list or revoke');
  }
}

// --- end of token and audit commands ----------------------------------------------------------------------------

// --- plan requests: what developers asked for on the portal -----------------------------------------------------

async function runPlanRequestCommand(argv, env, out) {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { status: { type: 'string' }, consumer: { type: 'string' }, note: { type: 'string' } },
  });
  const [verb, id] = positionals;
  const settings = adminSettings(env);
  const line = (r) =>
    `${r.id}\t${r.consumer}\t${r.currentPlan} -> ${r.requestedPlan}\t${r.status}\t${r.createdAt}${r.decidedAt ? `\tdecided ${r.decidedAt}` : ''}${r.note ? `\tnote: ${r.note}` : ''}${r.message ? `\tmessage: ${r.message}` : ''}`;
  if (verb === undefined) {
    const query = new URLSearchParams({ status: values.status ?? 'pending' });
    if (values.consumer) query.set('consumer', values.consumer);
    let after;
    let shown = 0;
    do {
      const page = await request(
        settings,
        'GET',
        `/plan-requests?${query}${after ? `&after=${encodeURIComponent(after)}` : ''}`,
      );
      for (const r of page.items) out(line(r));
      shown += page.items.length;
      after = page.next;
    } while (after);
    if (shown === 0) out(`No ${values.status ?? 'pending'} plan requests.`);
    return;
  }
  if (verb !== 'approve' && verb !== 'decline')
    throw new UsageError(`unknown requests command "${verb}": approve or decline`);
  if (!id) throw new UsageError(`requests ${verb} needs the request's id (requests lists them)`);
  if (verb === 'decline' && !values.note)
    throw new UsageError('requests decline needs --note TEXT: the requester reads it on the portal');
  const decided = await request(
    settings,
    'POST',
    `/plan-requests/${encodeURIComponent(id)}/${verb}`,
    values.note ? { note: values.note } : {},
  );
  out(`${verb === 'approve' ? 'Approved' : 'Declined'}: ${line(decided)}`);
}

module.exports = { runKeysCommand, usage, TOKEN_PRESETS };

if (require.main === module) {
  // A reader that stops early (| head) ends the output, not the CLI with a stack trace.
  process.stdout.on('error', (error) => process.exit(error.code === 'EPIPE' ? 0 : 1));
  runKeysCommand(process.argv.slice(2), process.env, (line) => process.stdout.write(`${line}\n`)).catch((error) => {
    if (
      error instanceof UsageError ||
      error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ||
      error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE'
    ) {
      // One line, and where the help is: not the whole usage after every mistake.
      const verb = process.argv.slice(2).find((arg) => !arg.startsWith('-'));
      const hint =
        verb && verbHelp(verb, process.env) ? `npm run -s keys -- ${verb} --help` : 'npm run -s keys -- --help';
      process.stderr.write(`keys: ${error.message}\nSee: ${hint}\n`);
      process.exit(2);
    }
    process.stderr.write(`keys: ${error.message}\n`);
    process.exit(1);
  });
}
