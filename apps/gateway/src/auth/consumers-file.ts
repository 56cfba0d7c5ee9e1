import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { Limits, PLAN_NAMES, PlanName, PlanTable } from './plans';

/** A consumer as stored: the key itself never is, only its SHA-256. */
export interface StoredConsumer {
  name: string;
  plan: PlanName;
  keyHash: string;
  keyHint: string;
  createdAt: string;
  revokedAt?: string;
  /** Enterprise: the agreed limits. Other plans: optional overrides of the plan's figures. */
  limits?: Limits;
}

export interface ConsumersFile {
  consumers: StoredConsumer[];
}

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function isValidConsumerName(name: string): boolean {
  return NAME_PATTERN.test(name);
}

/** Checks a parsed file; returns the problem, or undefined when it can be used. */
export function consumersFileProblem(file: unknown, plans: PlanTable): string | undefined {
  const consumers = (file as ConsumersFile | null)?.consumers;
  if (!Array.isArray(consumers)) return 'expected {"consumers": [...]}';
  const names = new Set<string>();
  for (const [index, c] of consumers.entries()) {
    const where = `consumers[${index}]`;
    if (typeof c !== 'object' || c === null) return `${where} must be an object`;
    if (typeof c.name !== 'string' || !isValidConsumerName(c.name)) return `${where}.name is missing or invalid`;
    if (names.has(c.name)) return `${where}.name "${c.name}" is used twice`;
    names.add(c.name);
    if (!PLAN_NAMES.includes(c.plan)) return `${where}.plan must be one of ${PLAN_NAMES.join(', ')}`;
    if (typeof c.keyHash !== 'string' || !/^[0-9a-f]{64}$/.test(c.keyHash)) return `${where}.keyHash must be a SHA-256 hex digest`;
    if (c.limits !== undefined && !(Number.isSafeInteger(c.limits.perMinute) && c.limits.perMinute > 0 && Number.isSafeInteger(c.limits.perDay) && c.limits.perDay > 0)) {
      return `${where}.limits must be {"perMinute": n, "perDay": n} with positive integers`;
    }
    if (plans[c.plan] === 'custom' && c.limits === undefined) return `${where} is on a custom plan and needs limits`;
  }
  return undefined;
}

/** Reads the file; a missing file is an empty one. Throws with the reason when it cannot be used. */
export function readConsumersFile(path: string, plans: PlanTable): ConsumersFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { consumers: [] };
    throw error;
  }
  const parsed: unknown = JSON.parse(text);
  const problem = consumersFileProblem(parsed, plans);
  if (problem) throw new Error(problem);
  return parsed as ConsumersFile;
}

/** Writes atomically (temporary file, then rename) so that a running gateway never reads half a file. */
export function writeConsumersFile(path: string, file: ConsumersFile): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, path);
}
