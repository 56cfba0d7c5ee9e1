/**
 * Jest transformer for the ES-module-only packages under node_modules (Nest 12, PGlite's dynamic imports).
 * Jest 29's CommonJS runtime cannot load them, so SWC (its WebAssembly build: no native binary to install)
 * rewrites them to CommonJS, including `import.meta.url` and dynamic `import()`.
 */
const { transformSync } = require('@swc/wasm');

module.exports = {
  process(source, filename) {
    const { code, map } = transformSync(source, {
      filename,
      sourceMaps: true,
      jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022' },
      module: { type: 'commonjs', ignoreDynamic: false },
    });
    return { code, map };
  },
  getCacheKey(source, filename) {
    return require('node:crypto')
      .createHash('sha1')
      .update('esm-to-cjs-v1')
      .update(filename)
      .update(source)
      .digest('hex');
  },
};
