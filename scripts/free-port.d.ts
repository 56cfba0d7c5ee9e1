/** Types of free-port.js (plain Node, so that the benches can use it too). */

/** A free TCP port on loopback, never one this process handed out before, never 6379 (the shared Redis). */
export function freePort(): Promise<number>;
