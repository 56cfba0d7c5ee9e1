/**
 * The apps' check of the running Node (libs/platform/src/supported-node.ts), for the scripts that run before any
 * build (`npm start`): the same file, loaded as it is. Node 24 strips its types itself; an older Node cannot load
 * TypeScript, and is just the one the check refuses, so there the file is compiled by the `typescript` package first
 * (a dev dependency: there wherever npm start can build).
 */
const { readFileSync } = require('node:fs');
const Module = require('node:module');
const path = require('node:path');

const FILE = path.join(__dirname, '../libs/platform/src/supported-node.ts');

/** @returns {typeof import('../libs/platform/src/supported-node')} */
function load() {
  try {
    return require(FILE);
  } catch {
    const ts = require('typescript');
    const { outputText } = ts.transpileModule(readFileSync(FILE, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2020 },
    });
    const compiled = new Module(FILE, module);
    compiled.filename = FILE;
    compiled._compile(outputText, FILE);
    return compiled.exports;
  }
}

module.exports = load();
