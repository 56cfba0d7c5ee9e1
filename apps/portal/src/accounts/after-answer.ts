import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';

/**
 * Work done after the page is answered: what sign-up and reset do for an email (look it up, hash, store, mail)
 * depends on whether it has an account, so none of it may delay the answer (a stopwatch would tell them apart).
 * Shutdown waits (before the database closes) for what was started (the mail of a sign-up just answered is not lost to a restart).
 */
@Injectable()
export class AfterAnswer implements BeforeApplicationShutdown {
  private readonly logger = new Logger('Accounts');
  private readonly pending = new Set<Promise<void>>();

  run(what: string, task: () => Promise<void>): void {
    const done: Promise<void> = Promise.resolve()
      .then(task)
      .catch((error: Error) => this.logger.error(`${what} failed after the answer: ${error.message}`))
      .finally(() => this.pending.delete(done));
    this.pending.add(done);
  }

  /** Resolves once everything started so far has finished (tests; shutdown). */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.drain();
  }
}
