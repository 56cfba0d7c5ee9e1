import { AppMetrics } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { DataSource } from 'typeorm';

interface PgPool {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/** Connection pool use, read when Prometheus scrapes. */
@Injectable()
export class DatabasePoolMetrics {
  constructor(metrics: AppMetrics, dataSource: DataSource) {
    const pool = () => (dataSource.driver as unknown as { master?: PgPool }).master;
    new Gauge({
      name: 'db_pool_connections',
      help: 'Database pool connections by state (total, idle, waiting clients).',
      labelNames: ['state'],
      registers: [metrics.registry],
      collect() {
        const current = pool();
        if (!current) return;
        this.set({ state: 'total' }, current.totalCount);
        this.set({ state: 'idle' }, current.idleCount);
        this.set({ state: 'waiting' }, current.waitingCount);
      },
    });
  }
}
