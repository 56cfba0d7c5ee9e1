/**
 * The warnings oidc-provider prints for what a test stand-in is on purpose (its in-memory adapter, the development
 * login form): true of every stand-in, so said once here rather than in every test's output. Any other warning
 * (a configuration mistake) still prints.
 */
/** "a quick start development-only feature devInteractions …", "… development-only in-memory adapter …". */
const EXPECTED = [/^oidc-provider WARNING: a quick start development-only /];

/** Its colours on a terminal (ESC [ … m), around the text. */
const ANSI_COLOUR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/** Builds a stand-in provider with the warnings above left out of the test's output. */
export function withoutStandInWarnings<T>(build: () => T): T {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    const text = typeof args[0] === 'string' ? args[0].replace(ANSI_COLOUR, '') : '';
    if (!EXPECTED.some((pattern) => pattern.test(text))) warn(...args);
  };
  try {
    return build();
  } finally {
    console.warn = warn;
  }
}
