import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashApiKey, isWellFormedApiKey } from './api-key';
import { runKeysCommand } from './keys.cli';

describe('keys command', () => {
  const file = join(mkdtempSync(join(tmpdir(), 'keys-cli-')), 'consumers.json');
  const env = { CONSUMERS_FILE: file, PLANS_FILE: join(__dirname, '../../../../gateway/plans.json') };
  const run = (...argv: string[]) => {
    const lines: string[] = [];
    runKeysCommand(argv, env, (line) => lines.push(line));
    return lines;
  };

  it('creates a consumer and prints its key last, storing only the hash', () => {
    const key = run('create', '--plan', 'pro', '--name', 'acme').at(-1)!;
    expect(isWellFormedApiKey(key)).toBe(true);
    const stored = readFileSync(file, 'utf8');
    expect(stored).not.toContain(key);
    expect(JSON.parse(stored).consumers[0]).toMatchObject({ name: 'acme', plan: 'pro', keyHash: hashApiKey(key) });
  });

  it('requires agreed limits for enterprise and stores them', () => {
    expect(() => run('create', '--plan', 'enterprise', '--name', 'bigco')).toThrow('needs its agreed limits');
    run('create', '--plan', 'enterprise', '--name', 'bigco', '--rpm', '5000', '--rpd', '2000000');
    expect(JSON.parse(readFileSync(file, 'utf8')).consumers[1].limits).toEqual({ perMinute: 5000, perDay: 2_000_000 });
  });

  it('refuses duplicate names, unknown plans and half-given limits', () => {
    expect(() => run('create', '--plan', 'pro', '--name', 'acme')).toThrow('already exists');
    expect(() => run('create', '--plan', 'gold')).toThrow('--plan must be one of');
    expect(() => run('create', '--plan', 'pro', '--rpm', '5')).toThrow('--rpm and --rpd go together');
  });

  it('lists consumers without any secret and revokes by name', () => {
    const listed = run('list').join('\n');
    expect(listed).toContain('acme\tpro\t300/min 10000/day');
    expect(listed).not.toMatch(/[0-9a-f]{64}/);
    run('revoke', 'acme');
    expect(run('list').join('\n')).toMatch(/acme.*revoked/);
    expect(() => run('revoke', 'acme')).toThrow('already revoked');
  });
});
