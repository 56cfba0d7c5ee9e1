import { join, relative } from 'node:path';

/**
 * The apps' JSON log lines (pino; the deliberate faults' level-50 lines among them) go to a file per test file,
 * `artifacts/test-logs/<test file>.log`, not to the terminal: pino writes straight to file descriptor 1, which Jest
 * cannot capture. A test that reads the lines passes a destination of its own (`startGateway({ logDestination })`),
 * which is kept. Loaded for the e2e and system projects (jest.config.js, setupFilesAfterEnv).
 */
jest.mock('pino', () => {
  const actual = jest.requireActual<typeof import('pino')>('pino');
  let file: ReturnType<typeof actual.destination> | undefined;
  const toFile = () => {
    if (!file) {
      const root = join(__dirname, '../..');
      const testPath = expect.getState().testPath ?? `worker-${process.env.JEST_WORKER_ID ?? 0}`;
      const name = relative(root, testPath).replace(/[\\/]/g, '__');
      file = actual.destination({ dest: join(root, 'artifacts/test-logs', `${name}.log`), mkdir: true, sync: true });
    }
    return file;
  };
  const quiet = Object.assign(
    (options?: object, stream?: Parameters<typeof actual>[1]) => actual(options as never, stream ?? toFile()),
    actual,
  );
  return Object.assign(quiet, { default: quiet, pino: quiet });
});
