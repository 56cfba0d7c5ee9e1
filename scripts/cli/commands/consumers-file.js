// @ts-check
/** The consumers file ({"consumers": [...]}, key hashes only): import it in batches, export every page of it. */
const { readFileSync, renameSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const { answer } = require('../admin');
const { UsageError } = require('../arguments');

/** @typedef {import('../admin').AdminClient} AdminClient */
/** @typedef {import('../admin').AdminSchemas['FileConsumerDto']} FileConsumer */
/** @typedef {import('../output').Out} Out */

/** The admin API takes at most 500 consumers per import. */
const IMPORT_BATCH = 500;
/** Consumers per page when the CLI reads them all (list, export). */
const PAGE = 1000;

/**
 * @param {string} file
 * @returns {FileConsumer[]}
 */
function readConsumersFile(file) {
  let parsed;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    const reason = /** @type {NodeJS.ErrnoException} */ (error);
    throw new UsageError(`${file}: ${reason.code === 'ENOENT' ? 'no such file' : reason.message}`);
  }
  if (!parsed || !Array.isArray(parsed.consumers)) throw new UsageError(`${file}: expected {"consumers": [...]}`);
  return parsed.consumers;
}

/**
 * Imports the file in batches; the file is read before the admin API is looked for.
 * @param {() => AdminClient} api
 * @param {string} file
 * @param {Out} out
 */
async function importConsumers(api, file, out) {
  const consumers = readConsumersFile(file);
  const client = api();
  const total = { created: 0, updated: 0, unchanged: 0 };
  for (let i = 0; i < consumers.length; i += IMPORT_BATCH) {
    const result = await answer(client.POST('/import', { body: { consumers: consumers.slice(i, i + IMPORT_BATCH) } }));
    for (const field of /** @type {(keyof typeof total)[]} */ (Object.keys(total))) total[field] += result[field];
  }
  out(
    `Imported ${consumers.length} consumer(s) from ${file}: ${total.created} created, ${total.updated} updated, ${total.unchanged} unchanged.`,
  );
}

/**
 * Every page of the export, written to FILE (whole, then renamed; mode 600) or to stdout.
 * @param {AdminClient} client
 * @param {string | undefined} file
 * @param {Out} out
 */
async function exportConsumers(client, file, out) {
  /** @type {FileConsumer[]} */
  const consumers = [];
  /** @type {string | undefined} */
  let after;
  do {
    const page = await answer(client.GET('/export', { params: { query: { limit: PAGE, after } } }));
    consumers.push(...page.consumers);
    after = page.next ?? undefined;
  } while (after);
  const text = `${JSON.stringify({ consumers }, null, 2)}\n`;
  if (!file) {
    process.stdout.write(text);
    return;
  }
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode: 0o600 });
  renameSync(temporary, file);
  out(`Exported ${consumers.length} consumer(s) to ${path.resolve(file)} (key hashes only).`);
}

module.exports = { importConsumers, exportConsumers, PAGE };
