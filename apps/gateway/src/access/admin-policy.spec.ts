import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError } from '@app/errors';
import type { AdminActor } from './admin-context';
import { ADMIN_POLICY, AdminOperationId, assertMayGrant, OBJECT_RULE_TEXT, routeRefusal } from './admin-policy';
import { ADMIN_SCOPES } from './admin-scopes';

const ROOT = join(__dirname, '../../../..');

/** docs/admin-tokens.md's policy table, rendered from ADMIN_POLICY and the routes of gateway/admin-openapi.json. */
function policyTable(): string {
  const document = JSON.parse(readFileSync(join(ROOT, 'gateway/admin-openapi.json'), 'utf8')) as {
    paths: Record<string, Record<string, { operationId: string }>>;
  };
  const routes = new Map<string, string>();
  for (const [path, item] of Object.entries(document.paths))
    for (const [method, operation] of Object.entries(item))
      routes.set(operation.operationId, `${method.toUpperCase()} ${path}`);
  const lines = (Object.keys(ADMIN_POLICY) as AdminOperationId[]).map((id) => {
    const { scopes, objects } = ADMIN_POLICY[id];
    const needs =
      scopes === 'any'
        ? 'any valid token'
        : scopes === 'none'
          ? 'no admin token'
          : scopes.map((s) => `\`${s}\``).join(' + ');
    return `| \`${routes.get(id) ?? '(no route)'}\` | \`${id}\` | ${needs} | \`${objects}\`: ${OBJECT_RULE_TEXT[objects]} |`;
  });
  return [
    '| route | operationId | scopes | a restricted token (ownConsumersOnly, plans) |',
    '|---|---|---|---|',
    ...lines,
  ].join('\n');
}

const actor = (over: Partial<AdminActor>): AdminActor => ({
  id: '00000000-0000-4000-8000-000000000001',
  name: 't',
  scopes: [...ADMIN_SCOPES],
  ownConsumersOnly: false,
  plans: null,
  expiresAt: null,
  ...over,
});

describe('the admin policy', () => {
  it("docs/admin-tokens.md states the policy table as the code has it (regenerate it from this test's message)", () => {
    const doc = readFileSync(join(ROOT, 'docs/admin-tokens.md'), 'utf8');
    const table = policyTable();
    expect(doc.includes(table) ? 'in the doc' : `docs/admin-tokens.md lacks this table:\n\n${table}\n`).toBe(
      'in the doc',
    );
  });

  it('refuses a route without an entry to root too, a fleet route to a restricted token, a missing scope to anyone', () => {
    const root = actor({ id: null, scopes: 'all' });
    expect(routeRefusal(root, 'noSuchOperation', 'GET /x')).toMatch(/no entry in the admin policy/);
    expect(routeRefusal(root, undefined, 'GET /x')).toMatch(/no entry in the admin policy/);
    expect(routeRefusal(root, 'exportConsumers', 'GET /export')).toBeNull();
    expect(routeRefusal(actor({ plans: ['free'] }), 'exportConsumers', 'GET /export')).toMatch(/an operator/);
    expect(routeRefusal(actor({ scopes: ['import'] }), 'importConsumers', 'POST /import')).toMatch(
      /consumers:write, keys:write/,
    );
    expect(routeRefusal(actor({ scopes: [] }), 'getCurrentToken', 'GET /token')).toBeNull();
  });

  it('grants a child no scope, restriction or expiry beyond its creator', () => {
    const until = new Date('2030-01-01T00:00:00Z');
    const creator = actor({ scopes: ['tokens:admin', 'consumers:read'], expiresAt: until });
    const child = { scopes: ['consumers:read'], ownConsumersOnly: false, plans: null, expiresAt: until };
    expect(() => assertMayGrant(creator, child)).not.toThrow();
    for (const beyond of [
      { ...child, scopes: ['audit:read'] },
      { ...child, expiresAt: null },
      { ...child, expiresAt: new Date(until.getTime() + 1) },
    ])
      expect(() => assertMayGrant(creator, beyond)).toThrow(ApiError);
    expect(() => assertMayGrant(actor({ ownConsumersOnly: true }), { ...child, ownConsumersOnly: true })).toThrow(
      ApiError,
    );
  });
});
