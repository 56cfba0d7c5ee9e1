import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isLoopbackHost } from '@app/platform';
import { ConsoleEnvironment, loadConsoleConfig } from '../../apps/console/src/config/console.config';
import { GatewayEnvironment, loadGatewayConfig } from '../../apps/gateway/src/config/gateway.config';
import { loadPetsConfig, PetsEnvironment } from '../../apps/pets/src/config/pets.config';
import { loadPortalConfig, PortalEnvironment } from '../../apps/portal/src/config/portal.config';
import { runIf } from '../support/skip';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { APP_NODE_OPTIONS } = require('../../scripts/app-node-options') as { APP_NODE_OPTIONS: string };

/**
 * Issue #52: deploy/kubernetes/ rendered by `kubectl kustomize` (each overlay), every object validated against its
 * schema (kubernetes-models), and the deployment's rules checked on what an operator would apply. No cluster runs:
 * what can only be shown on one is argued in docs/kubernetes.md. KUBECTL names another kubectl than the one on PATH
 * (Debian's kubernetes-client, kubectl 1.20 with kustomize v2.0.3, is what CI installs: .ci/run).
 */
const ROOT = join(__dirname, '../..');
const KUBECTL = process.env.KUBECTL || 'kubectl';
const OVERLAYS = ['development', 'production'] as const;
type Overlay = (typeof OVERLAYS)[number];

/** docs/benchmarks.md: the highest peak RSS measured under load, of any app (MB). */
const PEAK_RSS_MB = 249;
/** The least a pod waits after it is told to stop, before SIGTERM: the balancer's de-registration (docs/kubernetes.md). */
const DEREGISTRATION_SECONDS = 10;

interface Meta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}
interface Probe {
  httpGet?: { path: string; port: string | number; httpHeaders?: { name: string; value: string }[] };
  tcpSocket?: { port: string | number };
}
interface SecurityContext {
  runAsNonRoot?: boolean;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: { drop?: string[] };
}
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean }; configMapKeyRef?: unknown };
}
interface Container {
  name: string;
  image: string;
  command?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: SecurityContext;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
}
interface PodSpec {
  containers: Container[];
  automountServiceAccountToken?: boolean;
  securityContext?: SecurityContext;
  terminationGracePeriodSeconds?: number;
  topologySpreadConstraints?: { topologyKey: string; whenUnsatisfiable: string; labelSelector?: LabelSelector }[];
}
interface Workload {
  kind: 'Deployment' | 'Job';
  metadata: Meta;
  spec: { replicas?: number; template: { metadata: Meta; spec: PodSpec } };
}
interface NetworkPolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string };
}
interface NetworkPolicyRule {
  from?: NetworkPolicyPeer[];
  to?: NetworkPolicyPeer[];
  ports?: { port?: number | string; protocol?: string }[];
}
interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: Meta;
  // Each kind's own shape: read through the interfaces above.
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}

function kubectlVersion(): string | undefined {
  const run = spawnSync(KUBECTL, ['version', '--client'], { encoding: 'utf8' });
  return run.status === 0 ? run.stdout.trim() : undefined;
}

/** `kubectl kustomize` of an overlay, then every object through kubernetes-models (test/support/kubernetes-models.mjs). */
function render(overlay: string): { objects: K8sObject[]; invalid: { object: string; message: string }[] } {
  const dir = join(ROOT, 'deploy/kubernetes/overlays', overlay);
  const kustomize = spawnSync(KUBECTL, ['kustomize', dir], { encoding: 'utf8', maxBuffer: 16 << 20 });
  if (kustomize.status !== 0) throw new Error(`kubectl kustomize ${dir} failed:\n${kustomize.stderr}`);
  const validate = spawnSync(process.execPath, [join(ROOT, 'test/support/kubernetes-models.mjs')], {
    input: kustomize.stdout,
    encoding: 'utf8',
    maxBuffer: 16 << 20,
  });
  if (validate.status !== 0) throw new Error(`test/support/kubernetes-models.mjs failed:\n${validate.stderr}`);
  return JSON.parse(validate.stdout) as { objects: K8sObject[]; invalid: { object: string; message: string }[] };
}

const workloads = (objects: K8sObject[]) =>
  objects.filter((o): o is K8sObject & Workload => o.kind === 'Deployment' || o.kind === 'Job');
const deployments = (objects: K8sObject[]) => workloads(objects).filter((o) => o.kind === 'Deployment');
const ofKind = <T>(objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind) as unknown as T[];

/** Whether a selector picks pods with these labels (matchLabels, and In / NotIn / Exists expressions). */
function selects(selector: LabelSelector | undefined, labels: Record<string, string> = {}): boolean {
  if (!selector) return false;
  const byLabels = Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
  const byExpressions = (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    if (operator === 'In') return values.includes(labels[key]);
    if (operator === 'NotIn') return !values.includes(labels[key]);
    if (operator === 'Exists') return key in labels;
    return !(key in labels);
  });
  return byLabels && byExpressions;
}

/** The rendered config map the apps read through envFrom. */
function configData(objects: K8sObject[], name: string): Record<string, string> {
  const map = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === name);
  if (!map) throw new Error(`no ConfigMap ${name}`);
  return map.data ?? {};
}

/** Values an operator's Secrets would hold, for the apps' own configuration loaders to judge. */
function sampleSecret(name: string): string {
  if (name.endsWith('DATABASE_URL')) return 'postgres://petstore:s3cret@postgres.internal:5432/petstore';
  if (name === 'REDIS_URL') return 'rediss://:s3cret@redis.internal:6379';
  if (name === 'SMTP_URL') return 'smtp://portal:s3cret@smtp.internal:587';
  return randomBytes(32).toString('hex');
}

/**
 * A container's environment as the kubelet would give it: its config maps (envFrom), then its own entries, each
 * required secret key by a sample value (an optional key is absent, as a Secret without it leaves it).
 */
function environmentOf(objects: K8sObject[], container: Container): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef) Object.assign(env, configData(objects, source.configMapRef.name));
  }
  for (const entry of container.env ?? []) {
    if (entry.value !== undefined) env[entry.name] = entry.value;
    else if (entry.valueFrom?.secretKeyRef && !entry.valueFrom.secretKeyRef.optional)
      env[entry.name] = sampleSecret(entry.name);
  }
  return env;
}

/** Secrets by name: tokens, passwords, secrets, and the URLs that carry credentials. */
const SECRET_LOOKING = /(SECRET|TOKEN|PASSWORD)$|(DATABASE|REDIS|SMTP)_URL$/;

/** Each app: how its container is recognised (its command), its environment class and its configuration loader. */
const APPS = {
  pets: { schema: PetsEnvironment, load: loadPetsConfig },
  gateway: { schema: GatewayEnvironment, load: loadGatewayConfig },
  portal: { schema: PortalEnvironment, load: loadPortalConfig },
  console: { schema: ConsoleEnvironment, load: loadConsoleConfig },
} as const;
type App = keyof typeof APPS;

function appOf(container: Container): App | undefined {
  const main = /^dist\/apps\/(pets|gateway|portal|console)\/apps\/\1\/src\/(main|database\/migrate)\.js$/.exec(
    container.command?.[1] ?? '',
  );
  return main?.[1] as App | undefined;
}

const bytes = (quantity: string): number => {
  const units: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, K: 1e3, M: 1e6, G: 1e9 };
  const [, number, unit] = /^(\d+(?:\.\d+)?)([KMG]i?)?$/.exec(quantity) ?? [];
  if (number === undefined) throw new Error(`memory quantity ${quantity} not understood`);
  return Number(number) * (unit ? units[unit] : 1);
};

const kubectl = kubectlVersion();
if (!kubectl && process.env.CI) {
  describe('Kubernetes manifests', () => {
    it('have kubectl to render them', () => {
      throw new Error(
        `${KUBECTL} not found: CI renders deploy/kubernetes with it (apt-get install kubernetes-client; .ci/run installs it)`,
      );
    });
  });
}

runIf(kubectl, 'kubectl (apt-get install kubernetes-client)').describe(
  'Kubernetes manifests (deploy/kubernetes)',
  () => {
    const rendered = new Map<Overlay, K8sObject[]>();
    const invalid = new Map<Overlay, { object: string; message: string }[]>();
    beforeAll(() => {
      for (const overlay of OVERLAYS) {
        const { objects, invalid: bad } = render(overlay);
        rendered.set(overlay, objects);
        invalid.set(overlay, bad);
      }
    });
    const objectsOf = (overlay: Overlay) => rendered.get(overlay)!;

    describe.each(OVERLAYS)('overlay %s', (overlay) => {
      it('renders the four apps and the migrations Job, every object valid against its schema', () => {
        expect(invalid.get(overlay)).toEqual([]);
        expect(
          workloads(objectsOf(overlay))
            .map((w) => `${w.kind}/${w.metadata.name}`)
            .sort(),
        ).toEqual([
          'Deployment/console',
          'Deployment/gateway',
          'Deployment/pets',
          'Deployment/portal',
          'Job/petstore-migrate',
        ]);
        // No Secret is ever part of the manifests: the operator creates them (docs/kubernetes.md).
        expect(objectsOf(overlay).filter((o) => o.kind === 'Secret')).toEqual([]);
      });

      it('runs every workload in one namespace, on one image, with the heap flags of scripts/app-node-options.js', () => {
        const all = workloads(objectsOf(overlay));
        expect(new Set(all.map((w) => w.metadata.namespace)).size).toBe(1);
        expect(all[0].metadata.namespace).toBeTruthy();
        const containers = all.flatMap((w) => w.spec.template.spec.containers);
        expect(new Set(containers.map((c) => c.image)).size).toBe(1);
        for (const c of containers)
          expect([c.name, environmentOf(objectsOf(overlay), c).NODE_OPTIONS]).toEqual([c.name, APP_NODE_OPTIONS]);
      });

      it('gives every Deployment container readiness on /health/ready, liveness and start-up probes, with a loopback Host', () => {
        const wrong: string[] = [];
        for (const d of deployments(objectsOf(overlay))) {
          for (const c of d.spec.template.spec.containers) {
            const where = `${d.metadata.name}/${c.name}`;
            if (c.readinessProbe?.httpGet?.path !== '/health/ready')
              wrong.push(`${where}: readiness not on /health/ready`);
            if (!c.livenessProbe) wrong.push(`${where}: no liveness probe`);
            if (!c.startupProbe) wrong.push(`${where}: no start-up probe`);
            for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
              if (!probe?.httpGet) continue;
              // The apps answer 400 to a Host they do not know (DNS rebinding): the kubelet's default is the pod's IP.
              const host = probe.httpGet.httpHeaders?.find((h) => h.name.toLowerCase() === 'host')?.value;
              if (!host || !isLoopbackHost(host))
                wrong.push(`${where}: probe ${probe.httpGet.path} without a loopback Host`);
            }
          }
        }
        expect(wrong).toEqual([]);
      });

      it('gives every container requests and limits sized from the heap cap and the measured peak RSS', () => {
        const wrong: string[] = [];
        for (const w of workloads(objectsOf(overlay))) {
          for (const c of w.spec.template.spec.containers) {
            const where = `${w.metadata.name}/${c.name}`;
            const { requests = {}, limits = {} } = c.resources ?? {};
            for (const [kind, values] of [
              ['requests', requests],
              ['limits', limits],
            ] as const)
              for (const resource of ['cpu', 'memory'])
                if (!values[resource]) wrong.push(`${where}: no ${resource} ${kind}`);
            // Above the peak with room: an app at its heap cap must not be OOM-killed before V8 collects.
            if (limits.memory && bytes(limits.memory) < 1.5 * PEAK_RSS_MB * 1e6)
              wrong.push(`${where}: memory limit ${limits.memory} under 1.5 x the ${PEAK_RSS_MB} MB peak RSS`);
            const oldSpaceMb = Number(/--max-old-space-size=(\d+)/.exec(APP_NODE_OPTIONS)![1]);
            if (limits.memory && bytes(limits.memory) < 2 * oldSpaceMb * 2 ** 20)
              wrong.push(`${where}: memory limit ${limits.memory} under twice the ${oldSpaceMb} MB heap cap`);
          }
        }
        // The gateway and pets under load reach the peak: their requests cover it, so the scheduler reserves it.
        for (const name of ['gateway', 'pets']) {
          const d = deployments(objectsOf(overlay)).find((w) => w.metadata.name === name)!;
          const memory = d.spec.template.spec.containers[0].resources?.requests?.memory ?? '0';
          if (bytes(memory) < PEAK_RSS_MB * 1e6) wrong.push(`${name}: memory request ${memory} under the peak RSS`);
        }
        expect(wrong).toEqual([]);
      });

      it('runs every container as non-root, read-only, without privilege escalation or capabilities, without a token', () => {
        const wrong: string[] = [];
        for (const w of workloads(objectsOf(overlay))) {
          const pod = w.spec.template.spec;
          if (pod.automountServiceAccountToken !== false)
            wrong.push(`${w.metadata.name}: service-account token mounted`);
          for (const c of pod.containers) {
            const where = `${w.metadata.name}/${c.name}`;
            const s = c.securityContext ?? {};
            if ((s.runAsNonRoot ?? pod.securityContext?.runAsNonRoot) !== true) wrong.push(`${where}: runAsNonRoot`);
            if (s.readOnlyRootFilesystem !== true) wrong.push(`${where}: readOnlyRootFilesystem`);
            if (s.allowPrivilegeEscalation !== false) wrong.push(`${where}: allowPrivilegeEscalation`);
            if (!s.capabilities?.drop?.includes('ALL')) wrong.push(`${where}: capabilities not dropped`);
          }
        }
        expect(wrong).toEqual([]);
      });

      it('stops a pod after the balancer has let it go, and gives it longer than its drain', () => {
        const wrong: string[] = [];
        for (const d of deployments(objectsOf(overlay))) {
          const pod = d.spec.template.spec;
          for (const c of pod.containers) {
            const env = environmentOf(objectsOf(overlay), c);
            const [program, seconds] = c.lifecycle?.preStop?.exec?.command ?? [];
            const delay = program === 'sleep' ? Number(seconds) : 0;
            const drain = Number(env.SHUTDOWN_GRACE_MS ?? new APPS[appOf(c)!].schema().SHUTDOWN_GRACE_MS) / 1000;
            if (delay < DEREGISTRATION_SECONDS) wrong.push(`${d.metadata.name}: preStop ${delay} s`);
            if (!((pod.terminationGracePeriodSeconds ?? 30) > delay + drain))
              wrong.push(
                `${d.metadata.name}: terminationGracePeriodSeconds ${pod.terminationGracePeriodSeconds} not above preStop ${delay} s + drain ${drain} s`,
              );
          }
        }
        expect(wrong).toEqual([]);
      });

      it('takes every secret-looking variable from a Secret (secretKeyRef), never inline nor from a ConfigMap', () => {
        const wrong: string[] = [];
        for (const w of workloads(objectsOf(overlay))) {
          for (const c of w.spec.template.spec.containers) {
            for (const entry of c.env ?? [])
              if (SECRET_LOOKING.test(entry.name) && !entry.valueFrom?.secretKeyRef)
                wrong.push(`${w.metadata.name}/${c.name}: ${entry.name} not from a Secret`);
            if ((c.envFrom ?? []).some((source) => source.secretRef))
              wrong.push(`${w.metadata.name}: envFrom a Secret`);
          }
        }
        for (const map of objectsOf(overlay).filter((o) => o.kind === 'ConfigMap'))
          for (const key of Object.keys(map.data ?? {}))
            if (SECRET_LOOKING.test(key)) wrong.push(`ConfigMap ${map.metadata.name}: ${key}`);
        expect(wrong).toEqual([]);
      });

      it("configures the apps by ConfigMap with .env.example's variables only", () => {
        const documented = new Set(
          [...readFileSync(join(ROOT, '.env.example'), 'utf8').matchAll(/^(?:# )?([A-Z][A-Z0-9_]*)=/gm)].map(
            (m) => m[1],
          ),
        );
        const maps = objectsOf(overlay).filter((o) => o.kind === 'ConfigMap');
        expect(maps.length).toBeGreaterThan(0);
        const unknown = maps.flatMap((m) => Object.keys(m.data ?? {}).filter((key) => !documented.has(key)));
        expect(unknown).toEqual([]);
      });

      it('sets every variable each app requires: its own loader accepts the environment, in production, on PostgreSQL', () => {
        const wrong: string[] = [];
        for (const w of workloads(objectsOf(overlay))) {
          for (const c of w.spec.template.spec.containers) {
            const app = appOf(c);
            if (!app) {
              wrong.push(`${w.metadata.name}/${c.name}: command ${c.command?.join(' ')} is no app's`);
              continue;
            }
            const env = environmentOf(objectsOf(overlay), c);
            if (env.NODE_ENV !== 'production') wrong.push(`${w.metadata.name}: NODE_ENV ${env.NODE_ENV}`);
            // The loaders (apps/*/src/config) hold the rules: which variables production requires, and their values.
            try {
              const config = APPS[app].load(env) as { redis?: unknown };
              if (app === 'gateway' && !config.redis)
                wrong.push(`${w.metadata.name}: no Redis (REDIS_URL, a Cluster or Sentinels)`);
            } catch (error) {
              wrong.push(`${w.metadata.name}/${c.name}: ${(error as Error).message}`);
            }
            // Never the embedded PGlite in a cluster (a file on one pod): every database URL the app reads is set.
            for (const name of Object.keys(new APPS[app].schema()).filter((key) => key.endsWith('DATABASE_URL')))
              if (!env[name]) wrong.push(`${w.metadata.name}/${c.name}: ${name} unset`);
          }
        }
        expect(wrong).toEqual([]);
      });

      it('keeps the admin API and the console inside the cluster: ClusterIP Services, no Ingress to them', () => {
        const services = objectsOf(overlay).filter((o) => o.kind === 'Service');
        expect(services.map((s) => s.metadata.name).sort()).toEqual([
          'console',
          'gateway',
          'gateway-admin',
          'pets',
          'portal',
        ]);
        for (const s of services)
          expect([s.metadata.name, s.spec?.type ?? 'ClusterIP']).toEqual([s.metadata.name, 'ClusterIP']);
        const admin = services.find((s) => s.metadata.name === 'gateway-admin')!;
        expect((admin.spec?.ports as { port: number }[]).map((p) => p.port)).toEqual([3002]);
        const backends = objectsOf(overlay)
          .filter((o) => o.kind === 'Ingress')
          .flatMap((i) => (i.spec?.rules as { http: { paths: { backend: { service: { name: string } } }[] } }[]) ?? [])
          .flatMap((rule) => rule.http.paths.map((path) => path.backend.service.name));
        for (const name of backends) expect(['gateway', 'portal']).toContain(name);
      });

      it('wires the apps to each other by Service names they answer to, on ports the pods open', () => {
        type ServiceSpec = { selector: Record<string, string>; ports: { port: number; targetPort: string | number }[] };
        const services = objectsOf(overlay).filter((o) => o.kind === 'Service') as unknown as {
          metadata: Meta;
          spec: ServiceSpec;
        }[];
        const wrong: string[] = [];
        for (const s of services) {
          const pods = deployments(objectsOf(overlay)).filter((d) =>
            selects({ matchLabels: s.spec.selector }, d.spec.template.metadata.labels),
          );
          if (pods.length !== 1) wrong.push(`Service ${s.metadata.name}: selects ${pods.length} Deployments`);
          for (const port of s.spec.ports)
            for (const d of pods)
              if (!d.spec.template.spec.containers.some((c) => (c.ports ?? []).some((p) => p.name === port.targetPort)))
                wrong.push(`Service ${s.metadata.name}: no container port ${port.targetPort} in ${d.metadata.name}`);
        }
        // The gateway reaches pets, the portal and the console the admin API, by Service name: each name must be a
        // Service on that port, and one the called app answers (its allowed hosts; any other Host gets 400).
        const env = environmentOf(
          objectsOf(overlay),
          deployments(objectsOf(overlay)).find((d) => d.metadata.name === 'gateway')!.spec.template.spec.containers[0],
        );
        for (const [url, allowed] of [
          ['PETS_URL', 'PETS_ALLOWED_HOSTS'],
          ['ADMIN_URL', 'ADMIN_ALLOWED_HOSTS'],
        ]) {
          const { hostname, port } = new URL(env[url]);
          const service = services.find((s) => s.metadata.name === hostname);
          if (!service?.spec.ports.some((p) => p.port === Number(port)))
            wrong.push(`${url}: no Service ${hostname}:${port}`);
          if (!(env[allowed] ?? '').split(',').includes(hostname)) wrong.push(`${allowed} lacks ${hostname}`);
        }
        expect(wrong).toEqual([]);
      });

      it('orders the migrations before the apps: Argo CD waves and hook, and a kustomization of their own for Flux', () => {
        const job = workloads(objectsOf(overlay)).find((w) => w.kind === 'Job')!;
        const annotations = job.metadata.annotations ?? {};
        const config = objectsOf(overlay).find((o) => o.kind === 'ConfigMap')!;
        const wave = (o: { metadata: Meta }) => Number(o.metadata.annotations?.['argocd.argoproj.io/sync-wave'] ?? 0);
        expect(annotations['argocd.argoproj.io/hook']).toBe('Sync');
        expect(wave(job)).toBeLessThan(0);
        expect(wave(config)).toBeLessThan(wave(job));
        for (const d of deployments(objectsOf(overlay))) expect(wave(d)).toBeGreaterThan(wave(job));
        // Flux: ./migrations and ./apps render alone (the apps' Kustomization dependsOn the migrations').
        const alone = (part: string) => {
          const run = spawnSync(KUBECTL, ['kustomize', join(ROOT, 'deploy/kubernetes/overlays', overlay, part)], {
            encoding: 'utf8',
          });
          expect(run.stderr.replace(/^# Warning: .*\n/gm, '')).toBe('');
          return run.stdout;
        };
        expect(alone('migrations')).toMatch(/^kind: Job$/m);
        expect(alone('apps')).not.toMatch(/^kind: Job$/m);
      });
    });

    describe('production', () => {
      const objects = () => objectsOf('production');

      it('autoscales the gateway (autoscaling/v2) from two replicas at least, on CPU and on its request rate', () => {
        const [hpa, ...others] = ofKind<{
          apiVersion: string;
          spec: {
            scaleTargetRef: { kind: string; name: string };
            minReplicas: number;
            metrics: { type: string; resource?: { name: string }; pods?: { metric: { name: string } } }[];
          };
        }>(objects(), 'HorizontalPodAutoscaler');
        expect(others).toEqual([]);
        expect(hpa.apiVersion).toBe('autoscaling/v2');
        expect(hpa.spec.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: 'gateway' });
        expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
        expect(hpa.spec.metrics.map((m) => m.resource?.name ?? m.pods?.metric.name)).toEqual([
          'cpu',
          'http_requests_per_second',
        ]);
        // The autoscaler owns the count: a replicas field would reset it on every apply.
        const gateway = deployments(objects()).find((d) => d.metadata.name === 'gateway')!;
        expect(gateway.spec.replicas).toBeUndefined();
      });

      it('lets each app lose exactly one pod to a disruption (a PodDisruptionBudget each), spread across zones', () => {
        const budgets = ofKind<{
          metadata: Meta;
          spec: { maxUnavailable?: number; minAvailable?: number; selector: LabelSelector };
        }>(objects(), 'PodDisruptionBudget');
        const hpaMin = ofKind<{ spec: { minReplicas: number } }>(objects(), 'HorizontalPodAutoscaler')[0].spec
          .minReplicas;
        const wrong: string[] = [];
        for (const d of deployments(objects())) {
          const labels = d.spec.template.metadata.labels;
          const replicas = d.spec.replicas ?? hpaMin;
          const mine = budgets.filter((b) => selects(b.spec.selector, labels));
          if (mine.length !== 1) wrong.push(`${d.metadata.name}: ${mine.length} budgets`);
          for (const b of mine)
            if (!(b.spec.maxUnavailable === 1 || b.spec.minAvailable === replicas - 1))
              wrong.push(`${d.metadata.name}: budget allows other than one disruption`);
          if (replicas < 2) wrong.push(`${d.metadata.name}: ${replicas} replica`);
          const zones = (d.spec.template.spec.topologySpreadConstraints ?? []).filter(
            (t) => t.topologyKey === 'topology.kubernetes.io/zone' && selects(t.labelSelector, labels),
          );
          if (zones.length !== 1) wrong.push(`${d.metadata.name}: no zone spread of its own pods`);
        }
        expect(wrong).toEqual([]);
      });

      type Policy = {
        metadata: Meta;
        spec: {
          podSelector: LabelSelector;
          policyTypes: string[];
          ingress?: NetworkPolicyRule[];
          egress?: NetworkPolicyRule[];
        };
      };
      const policies = () => ofKind<Policy>(objects(), 'NetworkPolicy');
      const podLabels = (name: string) =>
        deployments(objects()).find((d) => d.metadata.name === name)!.spec.template.metadata.labels;
      /** Every ingress rule of the policies selecting an app's pods that opens this port (or every port). */
      const ingressTo = (app: string, port: number) =>
        policies()
          .filter((p) => selects(p.spec.podSelector, podLabels(app)) || Object.keys(p.spec.podSelector).length === 0)
          .flatMap((p) => p.spec.ingress ?? [])
          .filter((rule) => !rule.ports || rule.ports.some((p) => p.port === port));
      const peerIs = (peer: NetworkPolicyPeer, app: string) =>
        !peer.namespaceSelector && !peer.ipBlock && selects(peer.podSelector, podLabels(app));
      const isIngressController = (peer: NetworkPolicyPeer) =>
        peer.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'] === 'ingress-nginx' &&
        peer.podSelector?.matchLabels?.['app.kubernetes.io/name'] === 'ingress-nginx';

      it('denies every pod all traffic by default (a NetworkPolicy on every pod, both directions, no rule)', () => {
        const denyAll = policies().filter(
          (p) =>
            Object.keys(p.spec.podSelector).length === 0 &&
            p.spec.policyTypes.includes('Ingress') &&
            p.spec.policyTypes.includes('Egress') &&
            !p.spec.ingress?.length &&
            !p.spec.egress?.length,
        );
        expect(denyAll.map((p) => p.metadata.name)).toHaveLength(1);
        // No rule opens every peer or every port.
        for (const p of policies())
          for (const rule of [...(p.spec.ingress ?? []), ...(p.spec.egress ?? [])]) {
            expect([p.metadata.name, (rule.from ?? rule.to ?? []).length > 0]).toEqual([p.metadata.name, true]);
            expect([p.metadata.name, (rule.ports ?? []).length > 0]).toEqual([p.metadata.name, true]);
          }
      });

      it('lets only the ingress controller reach the public ports, only portal and console the admin API, only the gateway pets', () => {
        const peers = (app: string, port: number) => ingressTo(app, port).flatMap((rule) => rule.from ?? [{}]);
        expect(peers('gateway', 3000).every(isIngressController)).toBe(true);
        expect(peers('gateway', 3000).length).toBeGreaterThan(0);
        expect(peers('portal', 3003).every(isIngressController)).toBe(true);
        const admin = peers('gateway', 3002);
        expect(admin.every((peer) => peerIs(peer, 'portal') || peerIs(peer, 'console'))).toBe(true);
        expect(admin.some((peer) => peerIs(peer, 'portal')) && admin.some((peer) => peerIs(peer, 'console'))).toBe(
          true,
        );
        expect(peers('pets', 3001).every((peer) => peerIs(peer, 'gateway'))).toBe(true);
        expect(peers('pets', 3001).length).toBeGreaterThan(0);
        expect(peers('console', 3004)).toEqual([]);
      });

      it('lets the apps out to PostgreSQL, Redis (the gateway), the SMTP relay (the portal), DNS and each other only', () => {
        const allowed = new Set([53, 5432, 6379, 26379, 587, 3001, 3002]);
        const ports = policies().flatMap((p) =>
          (p.spec.egress ?? []).flatMap((rule) => rule.ports!.map((x) => x.port)),
        );
        expect(ports.filter((port) => !allowed.has(Number(port)))).toEqual([]);
        // Everything in a pod's egress that is not a pod of this namespace or DNS is an address block the operator sets.
        for (const p of policies())
          for (const rule of p.spec.egress ?? [])
            for (const peer of rule.to ?? []) expect(!!peer.ipBlock || !!peer.podSelector).toBe(true);
      });

      it("routes the Ingress with nginx.conf's body limits and passes the one trusted hop the gateway believes", () => {
        const nginx = readFileSync(join(ROOT, 'gateway/nginx.conf'), 'utf8');
        const limits = [...nginx.matchAll(/^\s*client_max_body_size (\S+);/gm)].map((m) => m[1]);
        const ingresses = ofKind<{ metadata: Meta }>(objects(), 'Ingress');
        const bodySize = (name: string) =>
          ingresses.find((i) => i.metadata.name === name)?.metadata.annotations?.[
            'nginx.ingress.kubernetes.io/proxy-body-size'
          ];
        expect([bodySize('gateway'), bodySize('portal')]).toEqual(limits);
        // ingress-nginx appends the address it saw to X-Forwarded-For: the gateway and portal trust that one hop.
        const config = configData(objects(), objects().find((o) => o.kind === 'ConfigMap')!.metadata.name);
        expect([config.TRUST_PROXY, config.PORTAL_TRUST_PROXY]).toEqual(['1', '1']);
      });
    });
  },
);
