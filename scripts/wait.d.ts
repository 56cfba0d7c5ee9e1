/** Types of wait.js (plain Node, so that the benches and scripts can use it too). */

/** Polls `check` every 100 ms until it is true (a throw counts as "not yet"); fails after `timeoutMs` (30 s), naming `what`. */
export function until(what: string, check: () => unknown, timeoutMs?: number): Promise<void>;

/** Waits until `url` answers below 500; fails after `timeoutMs` (60 s). */
export function waitForHttp(url: string, timeoutMs?: number): Promise<void>;
