import { AppMetrics } from '@app/platform';
import { GatewayUnderTest } from './gateway';

/** The value of one sample on a gateway's metrics port, e.g. metric(g, 'rate_limit_undecided_total', 'reason="late"'); 0 when absent. */
export async function metric(gateway: GatewayUnderTest, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${gateway.app.get(AppMetrics).port}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && l.includes(labels));
  return line ? Number(line.split(' ').pop()) : 0;
}
