import { Injectable, OnApplicationShutdown } from '@nestjs/common';

/** Closes the database after Nest has stopped taking requests. */
@Injectable()
export class ShutdownHooks implements OnApplicationShutdown {
  private readonly hooks: Array<() => Promise<void>> = [];

  onClose(hook: () => Promise<void>): void {
    this.hooks.push(hook);
  }

  async onApplicationShutdown(): Promise<void> {
    for (const hook of this.hooks) await hook();
  }
}
