/**
 * System files whose runs do not depend on DATABASE_URL or REDIS_URL: each starts its apps on the embedded defaults
 * whatever the environment says, or checks something no database takes part in. CI (.ci/run) runs them once, in the
 * embedded pass, and leaves them out of the pass against PostgreSQL and Redis, where they would run the same a second
 * time (126 s of workers' time there, 2026-11-29). test/e2e/repository/engine-independent-list.e2e-spec.ts holds each
 * entry to a file that exists and reads neither variable.
 */
module.exports = {
  'npm-start.e2e-spec.ts': 'npm start, with DATABASE_URL and REDIS_URL emptied: the embedded defaults',
  'npm-start-identity-provider.e2e-spec.ts': 'npm start with its identity provider, the database variables emptied',
  'npm-start-example-animal.e2e-spec.ts': 'the pets service as npm start runs it, DATABASE_URL emptied',
  'readme-commands-run-as-written.e2e-spec.ts': "the README's commands on npm start, the database variables emptied",
  'start-up-refusals.e2e-spec.ts': 'configuration refused at start-up, before any database answers',
  'client-on-older-node.e2e-spec.ts': 'the client library against a stub API, on an older Node',
  'balancer-config.e2e-spec.ts': "nginx's configuration in front of a server of the test's own",
  'compose-config.e2e-spec.ts': 'what each Compose makes of docker-compose.yml, without starting it',
  'kubernetes-manifests.e2e-spec.ts': 'deploy/kubernetes rendered by kubectl kustomize: no cluster, no database',
};
