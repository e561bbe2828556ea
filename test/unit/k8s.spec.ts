/**
 * Kubernetes manifests (k8s/, kustomize base + dev/prod overlays; issue 13), validated offline:
 * - each build (base, dev, prod), rendered by the real `kubectl kustomize` (test/unit/k8s/kustomize.ts; no
 *   warning allowed), against the Kubernetes 1.36 OpenAPI of
 *   kubernetes-models, unknown fields and removed API versions as errors (test/unit/k8s/validate.ts);
 * - what a schema cannot see: DNS names, selectors matching pod labels, every Service / HPA / PDB /
 *   NetworkPolicy / Ingress pointing at something that exists, probe ports declared, one service per pod,
 *   grace period vs the broker's graceful stop, pod security, secrets only in the Secret.
 */
import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ALL_SERVICES, checkEnvironment, loadConfig, SETTINGS } from "../../lib/platform/config";
import brokerOptions from "../../moleculer.config";
import { K8S_DIR, type K8sObject, kubectlKustomize, kubectlVersion, readManifests } from "./k8s/kustomize";
import { loadSchemas, schemaProblems } from "./k8s/validate";

type Json = Record<string, unknown>;
interface Container {
	name: string;
	image: string;
	command?: string[];
	args?: string[];
	env?: { name: string; value?: string }[];
	envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
	ports?: { name?: string; containerPort: number }[];
	readinessProbe?: { httpGet?: { path: string; port: string | number } };
	livenessProbe?: { httpGet?: { path: string; port: string | number } };
	startupProbe?: { httpGet?: { path: string; port: string | number } };
	lifecycle?: { preStop?: { sleep?: { seconds: number } } };
	resources?: { requests?: Json; limits?: Json };
	securityContext?: Json;
	volumeMounts?: { name: string; mountPath: string }[];
}
interface PodTemplate {
	metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
	spec: {
		containers: Container[];
		enableServiceLinks?: boolean;
		terminationGracePeriodSeconds?: number;
		securityContext?: Json;
		volumes?: { name: string; emptyDir?: Json }[];
	};
}
type Workload = K8sObject & {
	spec: { replicas?: number; selector: { matchLabels: Record<string, string> }; template: PodTemplate };
};

/** package.json (start:prod's command line, which a Deployment's `args` may only vary in its semi-space) */
const pkg = JSON.parse(readFileSync(join(__dirname, "../../package.json"), "utf8")) as {
	scripts: Record<string, string>;
};
/** Services that run as a Deployment in every cluster (simulator: dev only; devauth: never). */
const DEPLOYED = ALL_SERVICES.filter((s) => s !== "devauth" && s !== "simulator");
const HPA_SERVICES = ["gateway", "rates", "booking", "billing", "documents", "intake-bulk"];
/** Deployments that run a service in a role of its own: name → its service and the env that sets the role. */
const ROLES: Record<string, { service: string; env: Record<string, string> }> = {
	"intake-bulk": { service: "intake", env: { INTAKE_BULK_WORKER: "only" } },
	intake: { service: "intake", env: { INTAKE_BULK_WORKER: "off" } },
};
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const PORT_NAME = /^(?=.*[a-z])[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** The kustomizations an ops engineer applies, rendered by the real tool (`kubectl kustomize`). */
const BUILD_DIRS = { base: "base", dev: "overlays/dev", prod: "overlays/prod" } as const;
const builds: Record<string, K8sObject[]> = {};
const buildWarnings: Record<string, string[]> = {};
/** Why the builds could not be made (kubectl missing, a build refused): the first test says it. */
let buildError: Error | undefined;
for (const [name, dir] of Object.entries(BUILD_DIRS)) {
	try {
		const b = kubectlKustomize(join(K8S_DIR, dir));
		builds[name] = b.objects;
		buildWarnings[name] = b.warnings;
	} catch (err) {
		buildError ??= err as Error;
		builds[name] = [];
		buildWarnings[name] = [];
	}
}
const secretExample = readManifests(join(K8S_DIR, "base/secret.example.yaml"));

const ofKind = <T extends K8sObject = K8sObject>(objs: K8sObject[], kind: string) =>
	objs.filter((o) => o.kind === kind) as T[];
const workloads = (objs: K8sObject[]) =>
	objs.filter((o) => o.kind === "Deployment" || o.kind === "StatefulSet") as Workload[];
const matches = (sel: Record<string, string>, labels: Record<string, string>) =>
	Object.entries(sel).every(([k, v]) => labels[k] === v);
const envOf = (c: Container, name: string) => c.env?.find((e) => e.name === name)?.value;
/** Our image (other containers, e.g. NATS, have their own variables). */
const OUR_IMAGE = /\/merchant-shipping-api:/;
/** Variables a manifest may set that Node.js reads, not our code (so not declared in lib/platform/config.ts). */
const RUNTIME_ENV = new Set(["NODE_OPTIONS"]);
const mi = (q: unknown) => {
	const m = /^(\d+)(Mi|Gi)$/.exec(String(q));
	assert.ok(m, `memory quantity ${String(q)} is not in Mi/Gi`);
	return Number(m[1]) * (m[2] === "Gi" ? 1024 : 1);
};
/** The container port a probe or Service names (by name or number), or undefined. */
const portOf = (c: Container, p: string | number) =>
	c.ports?.find((x) => (typeof p === "number" ? x.containerPort === p : x.name === p));

describe("k8s manifests", () => {
	before(loadSchemas);

	it("kubectl kustomize renders base, dev and prod with no warning (no deprecated field)", () => {
		assert.equal(buildError, undefined, buildError?.message);
		assert.match(kubectlVersion(), /Kustomize Version: v5\./);
		for (const [name, objs] of Object.entries(builds)) {
			assert.ok(objs.length >= 40, `${name}: ${objs.length} objects`);
			assert.deepEqual(buildWarnings[name], [], `${name} warnings`);
		}
	});

	for (const [name, objs] of Object.entries(builds)) {
		describe(`kustomize build ${name}`, () => {
			it("every object is valid against the Kubernetes 1.36 schema, with no unknown field", () => {
				const problems = objs.flatMap((o) =>
					schemaProblems(o).map((p) => `${o.kind}/${o.metadata.name}${p.path}: ${p.message}`),
				);
				assert.deepEqual(problems, []);
			});

			it("names are DNS names, everything is in the msa namespace, labels carry part-of", () => {
				for (const o of objs) {
					const rule = ["Namespace", "Service"].includes(o.kind) ? DNS_LABEL : DNS_SUBDOMAIN;
					assert.match(o.metadata.name, rule, `${o.kind} name`);
					assert.ok(o.metadata.name.length <= (rule === DNS_LABEL ? 63 : 253));
					if (o.kind !== "Namespace")
						assert.equal(o.metadata.namespace, "msa", `${o.kind}/${o.metadata.name}`);
					assert.equal(o.metadata.labels?.["app.kubernetes.io/part-of"], "merchant-shipping-api");
				}
				assert.deepEqual(
					ofKind(objs, "Namespace").map((n) => n.metadata.name),
					["msa"],
				);
			});

			it("selectors match their pod labels; ports, probes and env of each pod agree", () => {
				for (const w of workloads(objs)) {
					const t = w.spec.template;
					const claims = (
						(w.spec as { volumeClaimTemplates?: { metadata: { name: string } }[] }).volumeClaimTemplates ?? []
					).map((v) => v.metadata.name);
					assert.ok(Object.keys(w.spec.selector.matchLabels).length, w.metadata.name);
					assert.ok(matches(w.spec.selector.matchLabels, t.metadata.labels), `${w.metadata.name} selector`);
					assert.equal(t.spec.enableServiceLinks, false, w.metadata.name);
					for (const c of t.spec.containers) {
						for (const p of c.ports ?? []) assert.match(p.name ?? "", PORT_NAME, `${c.name} port name`);
						for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe])
							if (probe?.httpGet)
								assert.ok(
									portOf(c, probe.httpGet.port),
									`${w.metadata.name}: probe port ${probe.httpGet.port}`,
								);
						for (const m of c.volumeMounts ?? [])
							assert.ok(
								t.spec.volumes?.some((v) => v.name === m.name) || claims.includes(m.name),
								`${w.metadata.name}: volume ${m.name}`,
							);
						const configMaps = new Set(ofKind(objs, "ConfigMap").map((x) => x.metadata.name));
						const secrets = new Set(secretExample.map((x) => x.metadata.name));
						for (const f of c.envFrom ?? []) {
							if (f.configMapRef) assert.ok(configMaps.has(f.configMapRef.name), f.configMapRef.name);
							if (f.secretRef) assert.ok(secrets.has(f.secretRef.name), f.secretRef.name);
						}
					}
				}
			});

			it("every variable set for our containers is declared in lib/platform/config.ts, with an allowed value", () => {
				const cm = ofKind(objs, "ConfigMap").find((c) => c.metadata.name === "msa-config") as K8sObject & {
					data: Record<string, string>;
				};
				const unknown = (n: string) => !(n in SETTINGS) && !RUNTIME_ENV.has(n);
				assert.deepEqual(
					Object.keys(cm.data).filter(unknown),
					[],
					"msa-config keys not in lib/platform/config.ts",
				);
				let ours = 0;
				for (const w of workloads(objs))
					for (const c of w.spec.template.spec.containers) {
						if (!OUR_IMAGE.test(c.image)) continue;
						ours++;
						const names = (c.env ?? []).map((e) => e.name);
						assert.deepEqual(
							names.filter(unknown),
							[],
							`${w.metadata.name}: env not in lib/platform/config.ts`,
						);
						// what the pod sees: the ConfigMap, then its own env (the Secret's values are placeholders)
						const env: NodeJS.ProcessEnv = { ...cm.data };
						for (const e of c.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
						assert.doesNotThrow(() => checkEnvironment(env), `${w.metadata.name}`);
					}
				assert.ok(ours >= DEPLOYED.length, `${ours} containers of our image`);
			});

			it("Services, Ingresses, HPAs, PDBs and NetworkPolicies point at things that exist", () => {
				const ws = workloads(objs);
				const podsOf = (sel: Record<string, string>) =>
					ws.filter((w) => matches(sel, w.spec.template.metadata.labels));
				for (const s of ofKind(objs, "Service")) {
					const spec = s.spec as {
						selector: Record<string, string>;
						ports: { targetPort: string | number }[];
					};
					const pods = podsOf(spec.selector);
					assert.ok(pods.length, `Service ${s.metadata.name} selects no pod`);
					for (const p of spec.ports)
						for (const w of pods)
							assert.ok(
								portOf(w.spec.template.spec.containers[0] as Container, p.targetPort),
								`${s.metadata.name}: ${p.targetPort}`,
							);
				}
				for (const i of ofKind(objs, "Ingress")) {
					const rules = (
						i.spec as {
							rules: {
								http: { paths: { backend: { service: { name: string; port: { name: string } } } }[] };
							}[];
						}
					).rules;
					for (const p of rules.flatMap((r) => r.http.paths)) {
						const svc = ofKind(objs, "Service").find((s) => s.metadata.name === p.backend.service.name);
						assert.ok(svc, `Ingress backend ${p.backend.service.name}`);
						assert.ok(
							(svc.spec as { ports: { name: string }[] }).ports.some(
								(x) => x.name === p.backend.service.port.name,
							),
						);
					}
				}
				for (const h of ofKind(objs, "HorizontalPodAutoscaler")) {
					const spec = h.spec as {
						scaleTargetRef: { kind: string; name: string };
						minReplicas: number;
						maxReplicas: number;
					};
					assert.ok(
						ws.some(
							(w) => w.kind === spec.scaleTargetRef.kind && w.metadata.name === spec.scaleTargetRef.name,
						),
						h.metadata.name,
					);
					assert.ok(spec.minReplicas >= 1 && spec.minReplicas <= spec.maxReplicas, h.metadata.name);
				}
				for (const p of ofKind(objs, "PodDisruptionBudget")) {
					const sel = (p.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels;
					assert.ok(podsOf(sel).length, `PDB ${p.metadata.name} selects no pod`);
				}
				for (const n of ofKind(objs, "NetworkPolicy")) {
					const spec = n.spec as {
						podSelector: { matchLabels?: Record<string, string> };
						ingress?: {
							from?: { podSelector?: { matchLabels?: Record<string, string> } }[];
							ports?: { port: string | number }[];
						}[];
					};
					const pods = podsOf(spec.podSelector.matchLabels ?? {});
					assert.ok(pods.length, `NetworkPolicy ${n.metadata.name} selects no pod`);
					for (const rule of spec.ingress ?? []) {
						for (const p of rule.ports ?? [])
							assert.ok(
								pods.some((w) => w.spec.template.spec.containers.some((c) => portOf(c, p.port))),
								`${n.metadata.name}: port ${p.port}`,
							);
						for (const f of rule.from ?? [])
							if (f.podSelector?.matchLabels)
								assert.ok(podsOf(f.podSelector.matchLabels).length, n.metadata.name);
					}
				}
			});

			it("only the gateway takes traffic from outside the namespace (and Prometheus its metrics port)", () => {
				const policies = ofKind(objs, "NetworkPolicy");
				const deny = policies.find((p) => {
					const s = p.spec as { podSelector: Json; ingress?: unknown[]; policyTypes?: string[] };
					return (
						!Object.keys(s.podSelector).length && !s.ingress?.length && s.policyTypes?.includes("Ingress")
					);
				});
				assert.ok(deny, "a default-deny ingress policy");
				for (const p of policies) {
					const spec = p.spec as {
						podSelector: { matchLabels?: Record<string, string> };
						ingress?: {
							from?: { podSelector?: Json; namespaceSelector?: Json; ipBlock?: Json }[];
							ports?: { port: string | number }[];
						}[];
					};
					for (const rule of spec.ingress ?? []) {
						const outside = !rule.from || rule.from.some((f) => f.namespaceSelector || f.ipBlock);
						if (!outside) continue;
						const gatewayOnly = spec.podSelector.matchLabels?.["app.kubernetes.io/name"] === "msa-gateway";
						const metricsOnly =
							(rule.ports ?? []).length > 0 && (rule.ports ?? []).every((x) => x.port === "metrics");
						assert.ok(gatewayOnly || metricsOnly, `${p.metadata.name} opens pods to other namespaces`);
					}
				}
			});

			it("one Deployment per service, each running exactly its own service with its probes, security and limits", () => {
				const deps = ofKind<Workload>(objs, "Deployment");
				const deployed: string[] = DEPLOYED;
				const expected = [
					...deployed,
					...Object.keys(ROLES).filter((r) => !deployed.includes(r)),
					...(name === "dev" ? ["simulator"] : []),
				].sort();
				assert.deepEqual(deps.map((d) => d.metadata.name.replace(/^msa-/, "")).sort(), expected);
				const o = brokerOptions(loadConfig({}));
				const budgetS = ((o.tracking?.shutdownTimeout ?? 0) + (o.registry?.stopDelay ?? 0)) / 1000;
				for (const d of deps) {
					const svc = d.metadata.name.replace(/^msa-/, "");
					const t = d.spec.template;
					const [c, ...rest] = t.spec.containers;
					assert.ok(c && !rest.length, d.metadata.name);
					const role = ROLES[svc];
					assert.equal(envOf(c, "SERVICES"), role?.service ?? svc);
					for (const [k, v] of Object.entries(role?.env ?? {})) assert.equal(envOf(c, k), v, `${svc}: ${k}`);
					assert.equal(t.metadata.labels["app.kubernetes.io/component"], role?.service ?? svc);
					assert.ok(!c.command, `${svc}: runs the image's CMD (compiled start:prod), no command override`);
					if (svc === "intake-bulk") {
						// start:prod's command line with its own semi-space (its young generation was ~40 MB of its RSS)
						const prod = (pkg.scripts["start:prod"] as string).trim().split(/\s+/);
						const semi = (w: string) => w.startsWith("--max-semi-space-size=");
						assert.deepEqual(
							c.args?.filter((w) => !semi(w)),
							prod.filter((w) => !semi(w)),
							`${svc}: args`,
						);
						assert.ok(c.args?.includes("--max-semi-space-size=4"), `${svc}: args ${c.args}`);
					} else if (svc === "documents") {
						// start:prod's command line with V8's old space capped (its RSS grew without a cap under
						// a sustained label load: docs/decisions/0049-kubernetes-manifests.md)
						const prod = (pkg.scripts["start:prod"] as string).trim().split(/\s+/);
						const cap = (w: string) => w.startsWith("--max-old-space-size=");
						assert.deepEqual(
							c.args?.filter((w) => !cap(w)),
							prod,
							`${svc}: args`,
						);
						assert.ok(c.args?.includes("--max-old-space-size=256"), `${svc}: args ${c.args}`);
					} else assert.ok(!c.args, `${svc}: runs the image's CMD (compiled start:prod), no args override`);
					const gw = svc === "gateway";
					const portVar = gw ? "PORT" : "HEALTH_PORT";
					const port = c.ports?.find((p) => p.name === (gw ? "http" : "health"));
					assert.equal(
						String(port?.containerPort),
						envOf(c, portVar),
						`${svc}: ${portVar} is the probed port`,
					);
					assert.equal(c.readinessProbe?.httpGet?.path, "/ready");
					assert.equal(c.livenessProbe?.httpGet?.path, gw ? "/health" : "/live");
					assert.equal(c.readinessProbe?.httpGet?.port, port?.name);
					const preStop = c.lifecycle?.preStop?.sleep?.seconds ?? 0;
					if (gw) assert.ok(preStop >= 3, "the gateway pauses before stopping");
					assert.ok((t.spec.terminationGracePeriodSeconds ?? 30) > preStop + budgetS, `${svc}: grace period`);
					assert.deepEqual(t.metadata.annotations, {
						"prometheus.io/scrape": "true",
						"prometheus.io/port": "9100",
						"prometheus.io/path": "/metrics",
					});
					assert.equal(portOf(c, "metrics")?.containerPort, 9100);
					const pod = t.spec.securityContext ?? {};
					assert.equal(pod.runAsNonRoot, true);
					assert.equal(pod.runAsUser, 1000);
					assert.deepEqual(pod.seccompProfile, { type: "RuntimeDefault" });
					assert.deepEqual(c.securityContext, {
						allowPrivilegeEscalation: false,
						readOnlyRootFilesystem: true,
						capabilities: { drop: ["ALL"] },
					});
					const tmp = c.volumeMounts?.find((m) => m.mountPath === "/tmp");
					assert.ok(
						tmp && t.spec.volumes?.find((v) => v.name === tmp.name)?.emptyDir,
						`${svc}: /tmp emptyDir`,
					);
					const req = mi(c.resources?.requests?.memory);
					const lim = mi(c.resources?.limits?.memory);
					assert.ok(req >= 128 && lim >= req * 1.3, `${svc}: memory request ${req}Mi, limit ${lim}Mi`);
					assert.ok(c.resources?.requests?.cpu, `${svc}: cpu request`);
					if (name === "dev") assert.equal(d.spec.replicas, 1, `${svc}: one replica in dev`);
				}
			});

			it("HPAs for gateway, rates, booking, billing, documents, intake-bulk; a PDB for every multi-replica workload", () => {
				const hpas = ofKind(objs, "HorizontalPodAutoscaler");
				assert.deepEqual(
					hpas.map((h) => (h.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name).sort(),
					HPA_SERVICES.map((s) => `msa-${s}`).sort(),
				);
				const pdbs = ofKind(objs, "PodDisruptionBudget");
				for (const w of workloads(objs)) {
					const hpa = hpas.find(
						(h) => (h.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name === w.metadata.name,
					);
					const max = Math.max(
						w.spec.replicas ?? 1,
						(hpa?.spec as { maxReplicas?: number } | undefined)?.maxReplicas ?? 0,
					);
					if (max < 2) continue;
					assert.ok(
						pdbs.some((p) =>
							matches(
								(p.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels,
								w.spec.template.metadata.labels,
							),
						),
						`${w.metadata.name} has no PodDisruptionBudget`,
					);
				}
			});

			it("configuration: ConfigMap without secrets, NATS reachable as TRANSPORTER, a 3-node JetStream cluster", () => {
				const cm = ofKind(objs, "ConfigMap").find((c) => c.metadata.name === "msa-config") as K8sObject & {
					data: Record<string, string>;
				};
				const secretKeys = Object.keys((secretExample[0] as K8sObject & { stringData: Json }).stringData);
				for (const k of Object.keys(cm.data)) {
					assert.ok(!secretKeys.includes(k), `${k} is a secret`);
					assert.doesNotMatch(k, /SECRET|PASSWORD|TOKEN|DATABASE_URL|REDIS_URL/, k);
				}
				assert.equal(cm.data.HOST, "0.0.0.0");
				assert.equal(cm.data.METRICS_PORT, "9100");
				assert.ok(cm.data.AUTH_ISSUER && cm.data.AUTH_AUDIENCE && cm.data.AUTH_JWKS_URL);
				assert.equal(cm.data.SANDBOX, name === "dev" ? "1" : "0");
				const tx = new URL(cm.data.TRANSPORTER as string);
				const nats = ofKind(objs, "Service").find((s) => s.metadata.name === tx.hostname);
				assert.ok(nats, `Service ${tx.hostname}`);
				assert.equal((nats.spec as { clusterIP?: string }).clusterIP, "None", "headless");
				assert.ok((nats.spec as { ports: { port: number }[] }).ports.some((p) => p.port === Number(tx.port)));
				const sts = ofKind<Workload & { spec: { serviceName: string; volumeClaimTemplates: unknown[] } }>(
					objs,
					"StatefulSet",
				).find((s) => s.metadata.name === "nats");
				assert.ok(sts);
				assert.equal(sts.spec.replicas, 3);
				assert.equal(sts.spec.serviceName, nats.metadata.name);
				assert.equal(sts.spec.volumeClaimTemplates.length, 1);
				const conf =
					(
						ofKind(objs, "ConfigMap").find((c) => c.metadata.name === "nats-config") as K8sObject & {
							data: Record<string, string>;
						}
					).data["nats.conf"] ?? "";
				assert.match(conf, /jetstream \{/);
				const routes = conf.match(/nats:\/\/nats-\d\.nats:6222/g) ?? [];
				assert.equal(routes.length, 3);
				// the largest message: a 200-label answer, ≈ 0.4 MB measured (nats.yaml); keep ≥ 4 MB of room
				const payload = /max_payload: (\d+)MB/.exec(conf);
				assert.ok(payload && Number(payload[1]) >= 4, "max_payload");
			});
		});
	}

	it("the Secret example holds every secret a pod needs, with placeholders", () => {
		const [s] = secretExample as (K8sObject & { stringData: Record<string, string> })[];
		assert.ok(s);
		assert.deepEqual(schemaProblems(s), []);
		for (const k of [
			"DATABASE_URL",
			"REDIS_URL",
			"LABEL_LINK_SECRET",
			"WEBHOOK_SECRET_KEY",
			"CURSOR_SECRET",
			"SANDBOX_COURIER_TOKEN",
		])
			assert.ok(k in s.stringData, k);
		for (const [k, v] of Object.entries(s.stringData))
			if (v) assert.match(v, /CHANGE_ME/, `${k} is a placeholder`);
		assert.deepEqual(
			Object.keys(s.stringData).filter((k) => !(k in SETTINGS)),
			[],
			"Secret keys not declared in lib/platform/config.ts",
		);
	});

	describe("the API's two addresses: base and alias (spec §1 rule 1, §9 rule 2)", () => {
		interface IngressSpec {
			tls?: { hosts?: string[]; secretName?: string }[];
			rules: {
				host?: string;
				http: {
					paths: {
						path: string;
						pathType: string;
						backend: { service: { name: string; port: { name: string } } };
					}[];
				};
			}[];
		}
		/** [base address, alias] and the TLS Secret of each, per build (the overlays' values; base: placeholders). */
		const EXPECTED: Record<string, { hosts: [string, string]; secrets: [string, string] }> = {
			base: {
				hosts: ["base-url.invalid", "alias-url.invalid"],
				secrets: ["msa-gateway-tls", "msa-gateway-alias-tls"],
			},
			dev: {
				hosts: ["api.dev.example.in", "shipping.dev.example.in"],
				secrets: ["msa-api-dev-tls", "msa-api-alias-dev-tls"],
			},
			prod: {
				hosts: ["api.example.in", "shipping.example.in"],
				secrets: ["msa-api-tls", "msa-api-alias-tls"],
			},
		};
		const gatewayIngress = (objs: K8sObject[]) => {
			const all = ofKind(objs, "Ingress");
			assert.deepEqual(
				all.map((i) => i.metadata.name),
				["msa-gateway"],
				"one Ingress: the gateway's",
			);
			return all[0].spec as IngressSpec;
		};

		for (const [name, want] of Object.entries(EXPECTED)) {
			it(`${name}: both hosts route every path to the gateway, each with its own TLS entry and Secret`, () => {
				const spec = gatewayIngress(builds[name]);
				assert.deepEqual(
					spec.rules.map((r) => r.host),
					want.hosts,
				);
				// identical routing on both hosts: every path (prefix /) to the gateway Service's http port
				for (const r of spec.rules)
					assert.deepEqual(
						r.http.paths,
						[
							{
								path: "/",
								pathType: "Prefix",
								backend: { service: { name: "msa-gateway", port: { name: "http" } } },
							},
						],
						`host ${r.host}`,
					);
				// TLS for each host: exactly one entry names it, with a Secret; no TLS host without a rule
				const tls = spec.tls ?? [];
				for (const [i, host] of want.hosts.entries()) {
					const entries = tls.filter((t) => t.hosts?.includes(host));
					assert.equal(entries.length, 1, `one tls entry for ${host}`);
					assert.equal(entries[0].secretName, want.secrets[i], `the TLS Secret of ${host}`);
					assert.match(entries[0].secretName ?? "", DNS_SUBDOMAIN);
				}
				assert.deepEqual(tls.flatMap((t) => t.hosts ?? []).sort(), [...want.hosts].sort());
				assert.equal(new Set(tls.map((t) => t.secretName)).size, tls.length, "a Secret per certificate");
			});
		}

		for (const name of ["dev", "prod"]) {
			it(`${name}: the overlay sets real hosts, and PUBLIC_BASE_URL is the base address`, () => {
				const spec = gatewayIngress(builds[name]);
				const hosts = spec.rules.map((r) => r.host ?? "");
				for (const h of hosts) assert.doesNotMatch(h, /\.invalid$/, `${name} keeps a placeholder host`);
				assert.equal(new Set(hosts).size, 2, "two distinct hosts");
				const cm = ofKind(builds[name], "ConfigMap").find((c) => c.metadata.name === "msa-config") as
					| (K8sObject & { data: Record<string, string> })
					| undefined;
				assert.ok(cm);
				assert.equal(
					new URL(cm.data.PUBLIC_BASE_URL).host,
					hosts[0],
					"signed label links name the base address",
				);
			});
		}
	});

	describe("validator and build function (they can fail)", () => {
		const dep = () => structuredClone(ofKind(builds.base, "Deployment")[0]) as Workload;

		it("reports unknown fields, wrong types, missing required fields and removed API versions", () => {
			const d = dep() as Workload & { spec: Json };
			(d.spec.template.spec.containers[0] as unknown as Json).imagePullPolicyy = "Always";
			d.spec.replicas = "two" as unknown as number;
			const msgs = schemaProblems(d).map((p) => `${p.path} ${p.message}`);
			assert.ok(
				msgs.some((m) => m.includes("containers/0/imagePullPolicyy") && m.includes("unknown field")),
				msgs.join("\n"),
			);
			assert.ok(
				msgs.some((m) => m.startsWith("/spec/replicas type")),
				msgs.join("\n"),
			);
			const noSelector = dep() as unknown as { spec: Json };
			delete noSelector.spec.selector;
			assert.ok(
				schemaProblems(noSelector as unknown as K8sObject).some((p) => p.message.includes("selector")),
			);
			assert.match(
				schemaProblems({ ...dep(), apiVersion: "policy/v1beta1", kind: "PodDisruptionBudget" })[0]?.message ??
					"",
				/removed in Kubernetes 1.25/,
			);
			assert.match(
				schemaProblems({ apiVersion: "autoscaling/v2beta2", kind: "HorizontalPodAutoscaler" })[0]?.message ??
					"",
				/removed/,
			);
		});

		it("the overlays change what they say (dev: simulator, sandbox, 1 replica; prod: image tag, replicas, memory)", () => {
			const img = (objs: K8sObject[]) =>
				ofKind<Workload>(objs, "Deployment")[0]?.spec.template.spec.containers[0]?.image ?? "";
			assert.match(img(builds.dev as K8sObject[]), /:dev$/);
			assert.match(img(builds.prod as K8sObject[]), /:1\.0\.0$/);
			const prodDeployment = (n: string) =>
				ofKind<Workload>(builds.prod as K8sObject[], "Deployment").find((d) => d.metadata.name === n);
			assert.equal(prodDeployment("msa-intake")?.spec.replicas, 3);
			assert.equal(prodDeployment("msa-intake-bulk")?.spec.replicas, 2);
			assert.equal(
				prodDeployment("msa-intake-bulk")?.spec.template.spec.containers[0]?.resources?.limits?.memory,
				"768Mi",
			);
			assert.ok(
				readFileSync(join(K8S_DIR, "overlays/dev/kustomization.yaml"), "utf8").includes("simulator.yaml"),
			);
		});
	});
});
