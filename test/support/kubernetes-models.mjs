/* global process */
/**
 * Reads rendered Kubernetes manifests (YAML documents, as `kubectl kustomize` prints them) on standard input and
 * writes `{ objects, invalid }` as JSON: every object, and those that fail their schema. Each object is built as the
 * kubernetes-models class of its apiVersion and kind (`kubernetes-models/<apiVersion>/<kind>`) and validated.
 * A separate ES module because kubernetes-models ships ES modules only (exports with an `import` condition), which
 * Jest's CommonJS runtime does not resolve: test/system/kubernetes-manifests.e2e-spec.ts runs it with the project's
 * Node. YAML is read with js-yaml (a dev dependency of its own).
 */
import { loadAll } from 'js-yaml';

let input = '';
for await (const chunk of process.stdin) input += chunk;

const objects = loadAll(input).filter((document) => document !== null && document !== undefined);
const invalid = [];
for (const object of objects) {
  const where = `${object.apiVersion} ${object.kind} ${object.metadata?.name}`;
  let Model;
  try {
    Model = (await import(`kubernetes-models/${object.apiVersion}/${object.kind}`))[object.kind];
  } catch {
    invalid.push({ object: where, message: 'no schema for this apiVersion and kind in kubernetes-models' });
    continue;
  }
  try {
    new Model(object).validate();
  } catch (error) {
    invalid.push({ object: where, message: error.message });
  }
}
process.stdout.write(JSON.stringify({ objects, invalid }));
