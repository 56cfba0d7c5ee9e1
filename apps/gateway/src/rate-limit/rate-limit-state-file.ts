import { Logger } from '@nestjs/common';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { MemoryRateLimitSnapshot, MemoryRateLimitStore } from './memory-rate-limit.store';

const logger = new Logger('RateLimit');

/**
 * The in-process counters across a restart (RATE_LIMIT_STATE_FILE; npm start keeps them in .data): written when
 * the gateway stops, read when it starts, so that a restart hands no consumer a fresh minute and day nor lifts a
 * ban. A missing file is a first start; an unreadable one is said in one line and ignored (counters start empty).
 * A crash (kill -9) writes nothing: the counters then start empty, as the Ready line says.
 */
export function restoreCounters(store: MemoryRateLimitStore, file: string): void {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      logger.warn(`Rate-limit counters not restored from ${file}: ${(error as Error).message}`);
    return;
  }
  try {
    const snapshot = JSON.parse(text) as MemoryRateLimitSnapshot;
    if (snapshot?.version !== 1 || !Array.isArray(snapshot.trackers))
      throw new Error('not a rate-limit state file of this version');
    const kept = store.restore(snapshot);
    logger.log(`Rate-limit counters restored from ${file}: ${kept} trackers still counting`);
  } catch (error) {
    logger.warn(`Rate-limit counters not restored from ${file} (${(error as Error).message}): they start empty`);
  }
}

/** Writes the counters (a whole file or none: written beside it, then renamed over it). */
export function saveCounters(store: MemoryRateLimitStore, file: string): void {
  try {
    mkdirSync(dirname(file), { recursive: true });
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, JSON.stringify(store.snapshot()), { mode: 0o600 });
    renameSync(partial, file);
  } catch (error) {
    logger.warn(`Rate-limit counters not kept in ${file}: ${(error as Error).message}`);
  }
}
