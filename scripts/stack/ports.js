/** Checks, before anything starts, that every port of the stack is free on loopback. */
const { createServer } = require('node:net');
const { StackError } = require('./stack-error');

/** Resolves with the error code of binding `host:port` (undefined: it was free, and is released again). */
function tryBind(host, port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error) => resolve(error.code ?? error.message));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

/** Throws a StackError naming the variable of the first port that cannot be bound. */
async function assertPortsFree(plan, host) {
  for (const { port, variable, what } of plan) {
    const failure = await tryBind(host, port);
    if (failure === 'EADDRINUSE')
      throw new StackError(
        `${variable}: port ${port} (${what}) is already in use on ${host}: set ${variable} to a free port`,
      );
    if (failure)
      throw new StackError(
        `${variable}: port ${port} (${what}) cannot be bound on ${host} (${failure}): set ${variable} to another port`,
      );
  }
}

module.exports = { assertPortsFree };
