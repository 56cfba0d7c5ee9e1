import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadGatewayConfig } from '../config/gateway.config';
import { hashApiKey } from './api-key';
import { mintDemoKeyIfNoConsumers } from './demo-key';
import { loadPlans } from './plans';

describe('mintDemoKeyIfNoConsumers', () => {
  const plans = loadPlans(join(__dirname, '../../../../gateway/plans.json'));
  const quiet = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
  afterAll(() => quiet.mockRestore());

  it('mints a Free key once in development, stores only its hash and keeps a copy for the newcomer', () => {
    const dir = mkdtempSync(join(tmpdir(), 'demo-key-'));
    const config = loadGatewayConfig({ CONSUMERS_FILE: join(dir, 'consumers.json') });
    const key = mintDemoKeyIfNoConsumers(config, plans)!;
    const stored = JSON.parse(readFileSync(join(dir, 'consumers.json'), 'utf8'));
    expect(stored.consumers).toEqual([expect.objectContaining({ name: 'demo', plan: 'free', keyHash: hashApiKey(key) })]);
    expect(readFileSync(join(dir, 'demo-api-key'), 'utf8').trim()).toBe(key);
    expect(mintDemoKeyIfNoConsumers(config, plans)).toBeUndefined();
  });

  it('never mints in production', () => {
    const dir = mkdtempSync(join(tmpdir(), 'demo-key-'));
    const config = { ...loadGatewayConfig({ CONSUMERS_FILE: join(dir, 'consumers.json') }), production: true };
    expect(mintDemoKeyIfNoConsumers(config, plans)).toBeUndefined();
    expect(existsSync(join(dir, 'consumers.json'))).toBe(false);
  });
});
