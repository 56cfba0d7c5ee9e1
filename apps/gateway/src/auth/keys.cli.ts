import { parseArgs } from 'node:util';
import { ConfigurationError } from '@app/platform';
import { loadGatewayConfig } from '../config/gateway.config';
import { generateApiKey, hashApiKey, keyHint } from './api-key';
import { isValidConsumerName, readConsumersFile, StoredConsumer, writeConsumersFile } from './consumers-file';
import { PLAN_NAMES, PlanName, loadPlans } from './plans';

const USAGE = `Usage:
  npm run -s keys -- create --plan free|pro|business|enterprise [--name NAME] [--rpm N --rpd N]
  npm run -s keys -- list
  npm run -s keys -- revoke NAME

The consumers file is CONSUMERS_FILE (default .data/consumers.json); running gateways pick changes up within
CONSUMERS_RELOAD_MS. "create" prints the new key as the last line: it is shown only this once.`;

class UsageError extends Error {}

function positiveInteger(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9][0-9]*$/.test(value) || !Number.isSafeInteger(Number(value))) throw new UsageError(`${flag} must be a positive integer`);
  return Number(value);
}

export function runKeysCommand(argv: string[], env: Record<string, string | undefined>, out: (line: string) => void): void {
  const config = loadGatewayConfig(env);
  const plans = loadPlans(config.plansFile);
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { plan: { type: 'string' }, name: { type: 'string' }, rpm: { type: 'string' }, rpd: { type: 'string' } },
  });
  const [command, ...rest] = positionals;
  const file = readConsumersFile(config.consumersFile, plans);

  switch (command) {
    case 'create': {
      const plan = values.plan as PlanName | undefined;
      if (!plan || !PLAN_NAMES.includes(plan)) throw new UsageError(`--plan must be one of ${PLAN_NAMES.join(', ')}`);
      const rpm = positiveInteger(values.rpm, '--rpm');
      const rpd = positiveInteger(values.rpd, '--rpd');
      if ((rpm === undefined) !== (rpd === undefined)) throw new UsageError('--rpm and --rpd go together');
      if (plans[plan] === 'custom' && rpm === undefined) throw new UsageError(`the ${plan} plan needs its agreed limits: --rpm N --rpd N`);
      const name = values.name ?? `${plan}-${generateApiKey().slice(-6).toLowerCase().replace(/[^a-z0-9]/g, 'x')}`;
      if (!isValidConsumerName(name)) throw new UsageError('--name must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit');
      if (file.consumers.some((c) => c.name === name)) throw new UsageError(`a consumer named "${name}" already exists`);
      const key = generateApiKey();
      const consumer: StoredConsumer = {
        name,
        plan,
        keyHash: hashApiKey(key),
        keyHint: keyHint(key),
        createdAt: new Date().toISOString(),
        ...(rpm !== undefined && rpd !== undefined ? { limits: { perMinute: rpm, perDay: rpd } } : {}),
      };
      writeConsumersFile(config.consumersFile, { consumers: [...file.consumers, consumer] });
      out(`Created consumer "${name}" on the ${plan} plan in ${config.consumersFile}. The key is shown only now:`);
      out(key);
      return;
    }
    case 'list': {
      if (file.consumers.length === 0) {
        out(`No consumers in ${config.consumersFile}.`);
        return;
      }
      for (const c of file.consumers) {
        const plan = plans[c.plan];
        const limits = c.limits ?? (plan === 'custom' ? undefined : plan);
        const figures = limits ? `${limits.perMinute}/min ${limits.perDay}/day` : 'no limits';
        const state = c.revokedAt ? `revoked ${c.revokedAt}` : 'active';
        out(`${c.name}\t${c.plan}\t${figures}\t${c.keyHint}\tcreated ${c.createdAt}\t${state}`);
      }
      return;
    }
    case 'revoke': {
      const name = rest[0];
      if (!name) throw new UsageError('revoke needs the consumer name');
      const target = file.consumers.find((c) => c.name === name);
      if (!target) throw new UsageError(`no consumer named "${name}"`);
      if (target.revokedAt) throw new UsageError(`"${name}" was already revoked on ${target.revokedAt}`);
      target.revokedAt = new Date().toISOString();
      writeConsumersFile(config.consumersFile, file);
      out(`Revoked "${name}". Running gateways refuse its key within ${config.consumersReloadMs} ms.`);
      return;
    }
    default:
      throw new UsageError(command ? `unknown command "${command}"` : 'a command is needed');
  }
}

if (require.main === module) {
  try {
    runKeysCommand(process.argv.slice(2), process.env, (line) => process.stdout.write(`${line}\n`));
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`keys: ${error.message}\n\n${USAGE}\n`);
      process.exit(2);
    }
    process.stderr.write(`keys: ${error instanceof ConfigurationError || error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
