// @ts-check
/** The CLI's help: every usage line, the paragraphs that explain them, and one verb's lines for `VERB --help`. */
const { readPlans, adminScopes } = require('./catalogue');

/**
 * @param {Record<string, unknown> | undefined} plans
 * @returns {string}
 */
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

const BILLING_USAGE = `Billing and prepaid credits (docs/billing.md; consumers:read to show, consumers:write and a token of the
whole fleet to change):
  npm run -s keys -- billing NAME
  npm run -s keys -- billing NAME [--anchor ISO-DATE|none] [--per-month N|none] [--refill N/day|N/month|none] [--cost OPERATION=N ...|--cost none]
  npm run -s keys -- credits [show] NAME [--days N]
  npm run -s keys -- credits top-up NAME --amount N --reason TEXT
  npm run -s keys -- credits set NAME --balance N|none --reason TEXT

"billing NAME" shows the anchor (its own, or its creation time), the monthly quota it is held to (its own, or its
plan's), the current billing period, and the credit refill and costs when credits are in force. --anchor moves the
anchor (none: back to the creation time); the period in progress keeps its count and ends at the new anchor's next
reset: no free reset. --per-month sets its own monthly quota, --refill its own refill (month: on the anchor),
--cost its own costs by operation id (the others: its plan's); none: back to its plan's. "credits NAME" shows the
balance, refill, costs, the projected exhaustion, the spend per UTC day (--days, default 30) and the ledger, newest
first ("credits show NAME" too, for a consumer named top-up, set or show). "top-up" adds to the balance (the first one puts credits in force), "set" sets it (none: credits no longer
in force). Every change is audited.`;

const WEBHOOKS_USAGE = `Webhook endpoints (docs/webhooks.md; webhooks:read to list, webhooks:write to change; --fleet: the
operators' endpoints, which get every consumer's events, for a token of the whole fleet):
  npm run -s keys -- webhooks list NAME|--fleet
  npm run -s keys -- webhooks add NAME|--fleet --url URL [--events TYPE,TYPE] [--description TEXT]
  npm run -s keys -- webhooks remove NAME|--fleet ENDPOINT-ID
  npm run -s keys -- webhooks rotate NAME|--fleet ENDPOINT-ID [--overlap SECONDS]
  npm run -s keys -- webhooks deliveries NAME|--fleet ENDPOINT-ID [--limit N]
  npm run -s keys -- webhooks redeliver NAME|--fleet ENDPOINT-ID DELIVERY-ID
  npm run -s keys -- webhooks failing

"add" checks the URL with the outbound policy and prints the endpoint's signing secret as the last line: it is
shown only this once. --events limits it to some event types (quota.threshold_crossed, credits.low_balance,
credits.exhausted; default: all). "rotate" prints the new secret as the last line, shown only this once; the old one
signs beside it for --overlap seconds (default 86400, at most 604800; 0: it stops now, for a leaked secret). "deliveries" shows the newest first (default 20), each with its attempts (time,
status, latency, error); "redeliver" sends the same message (the same webhook-id) to the same endpoint again.
"failing" lists the endpoints failing now or disabled, across consumers.

A consumer's threshold events (docs/alerts.md; webhooks:read), what its webhooks were sent:
  npm run -s keys -- events NAME [--policy day|month|credits] [--type TYPE] [--limit N]

Newest first (default 20): when, the type, the policy and threshold, the counts (or the balance), the period, the id.`;

const CLIENT_BINDING_USAGE = `OAuth client bindings and allowed addresses (docs/oauth.md; consumers:read to list, keys:write to bind, unbind
or allow a key or binding, consumers:write to allow a consumer):
  npm run -s keys -- bindings NAME
  npm run -s keys -- bind NAME --issuer URL --client CLIENT-ID
  npm run -s keys -- unbind NAME BINDING-ID
  npm run -s keys -- allow NAME [--key KEY-ID|--binding BINDING-ID] RANGE... | --anywhere

"bind" lets the access tokens of an issuer's client (one of the gateway's OAUTH_ISSUERS, exactly as configured)
authenticate as the consumer, counted on the same limits as its keys; a client is bound to one consumer at most.
"unbind" stops its tokens on every gateway. "allow" restricts where the consumer's keys and tokens (or one key's, or
one binding's, within the consumer's) may be used from: IPv4 and IPv6 addresses and CIDR ranges, the client address
judged as the rate limits judge it (TRUST_PROXY); --anywhere lifts it. Every change is audited.`;

/**
 * Every usage line of the CLI, and the paragraphs that explain them.
 * @param {NodeJS.ProcessEnv} env
 */
const helpText = (env) =>
  `${usage(readPlans(env))}\n\n${tokenAuditUsage()}\n\n${PLAN_REQUEST_USAGE}\n\n${BILLING_USAGE}\n\n${WEBHOOKS_USAGE}\n\n${CLIENT_BINDING_USAGE}`;

const VERB_PREFIX = '  npm run -s keys -- ';

/**
 * `--help` for one verb: its usage lines (the verb's own), then where the rest is.
 * @param {string} verb
 * @param {NodeJS.ProcessEnv} env
 * @returns {string | undefined}
 */
function verbHelp(verb, env) {
  const lines = helpText(env)
    .split('\n')
    .filter((line) => line === `${VERB_PREFIX}${verb}` || line.startsWith(`${VERB_PREFIX}${verb} `));
  if (lines.length === 0) return undefined;
  return `Usage:\n${lines.join('\n')}\n\nEvery command: npm run -s keys -- --help`;
}

module.exports = { usage, helpText, verbHelp };
