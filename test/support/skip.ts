/**
 * Tests that need something this machine may lack (a Redis or PostgreSQL server, nginx, Docker): skipped when it is
 * missing, and saying so. A silent `describe.skip` reads as a pass; this prints one line per skipped block,
 * `skipped: <what>: needs <what it needs>`, on standard error, which Jest passes through to the terminal and CI's log
 * (docs/testing.md, "Skipped tests").
 */

type Body = jest.ProvidesCallback;

function say(title: string, needs: string): void {
  process.stderr.write(`skipped: ${title}: needs ${needs}\n`);
}

/**
 * `runIf(condition, needs).describe(...)` / `.it(...)`: the block runs when `condition` holds, else is skipped with
 * one line naming `needs` (e.g. 'REDIS_URL (a Redis server)').
 */
export function runIf(
  condition: unknown,
  needs: string,
): {
  describe(title: string, body: () => void): void;
  it(title: string, body: Body, timeout?: number): void;
} {
  return {
    describe(title, body) {
      if (condition) return describe(title, body);
      say(title, needs);
      describe.skip(title, body); // skipped for want of `needs`: say() has just printed why
    },
    it(title, body, timeout) {
      if (condition) return it(title, body, timeout);
      say(title, needs);
      it.skip(title, body, timeout); // skipped for want of `needs`: say() has just printed why
    },
  };
}
