/**
 * Offline schema validation of Kubernetes objects against the Kubernetes 1.36 OpenAPI, as compiled into
 * `kubernetes-models` 5.1.0 (pinned exactly in package.json; STACK-NOTES "Kubernetes manifests").
 *
 * The package's validators check types, enums and required fields but accept unknown fields (its schemas have no
 * `additionalProperties: false`) and ship compiled, not as JSON. Unknown fields are found by running the validator
 * over a Proxy that records which keys of each object it reads: a validator reads every property its schema
 * declares (and every entry of a map), so a key it never read is not in the schema, e.g. a misspelt
 * `imagePullPolicyy` or a field of a newer Kubernetes.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** One problem found in an object: its JSON pointer and what is wrong. */
export interface SchemaProblem {
	path: string;
	message: string;
}

interface AjvError {
	instancePath: string;
	keyword: string;
	params: Record<string, unknown>;
	message?: string;
}
type ValidateFn = ((data: unknown) => boolean) & { errors?: AjvError[] | null };

/** apiVersion + kind served by Kubernetes 1.36 that k8s/ may use → the schema module of kubernetes-models. */
const SERVED: Record<string, string> = {
	"v1/Namespace": "IoK8sApiCoreV1Namespace",
	"v1/ConfigMap": "IoK8sApiCoreV1ConfigMap",
	"v1/Secret": "IoK8sApiCoreV1Secret",
	"v1/Service": "IoK8sApiCoreV1Service",
	"apps/v1/Deployment": "IoK8sApiAppsV1Deployment",
	"apps/v1/StatefulSet": "IoK8sApiAppsV1StatefulSet",
	"autoscaling/v2/HorizontalPodAutoscaler": "IoK8sApiAutoscalingV2HorizontalPodAutoscaler",
	"policy/v1/PodDisruptionBudget": "IoK8sApiPolicyV1PodDisruptionBudget",
	"networking.k8s.io/v1/Ingress": "IoK8sApiNetworkingV1Ingress",
	"networking.k8s.io/v1/NetworkPolicy": "IoK8sApiNetworkingV1NetworkPolicy",
};

/** API versions no longer served (Kubernetes release that removed them). */
export const REMOVED_API_VERSIONS: Record<string, string> = {
	"extensions/v1beta1": "1.22",
	"apps/v1beta1": "1.16",
	"apps/v1beta2": "1.16",
	"autoscaling/v2beta1": "1.25",
	"autoscaling/v2beta2": "1.26",
	"policy/v1beta1": "1.25",
	"networking.k8s.io/v1beta1": "1.22",
	"batch/v1beta1": "1.25",
};

/** kubernetes-models' folder: its export map has only the `import` condition, so its files are loaded by path. */
const modelsDir = (require.resolve.paths("kubernetes-models") ?? [])
	.map((d) => join(d, "kubernetes-models"))
	.find((d) => existsSync(join(d, "_schemas")));
const validators = new Map<string, ValidateFn>();

/**
 * Loads the validators of every kind in {@link SERVED} (kubernetes-models is ESM only and its export map has
 * only the `import` condition: loaded with `import()` by path). Call once before {@link schemaProblems}.
 * @throws Error when kubernetes-models is not installed
 */
export async function loadSchemas(): Promise<void> {
	if (!modelsDir) throw new Error("kubernetes-models is not installed");
	for (const mod of Object.values(SERVED)) {
		if (validators.has(mod)) continue;
		const m = (await import(pathToFileURL(join(modelsDir, "_schemas", `${mod}.js`)).href)) as {
			validate: ValidateFn;
		};
		validators.set(mod, m.validate);
	}
}

function validatorFor(apiVersion: string, kind: string): ValidateFn | undefined {
	const mod = SERVED[`${apiVersion}/${kind}`];
	if (!mod) return undefined;
	const v = validators.get(mod);
	if (!v) throw new Error("schemas not loaded: await loadSchemas() first");
	return v;
}

function isPlain(x: unknown): x is Record<string, unknown> {
	return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** Runs `fn` over a read-recording view of `root`; answers the keys read per object. */
function recordReads(root: object, fn: (view: unknown) => void): WeakMap<object, Set<string>> {
	const reads = new WeakMap<object, Set<string>>();
	const views = new WeakMap<object, object>();
	const wrap = (v: unknown): unknown => {
		if (typeof v !== "object" || v === null) return v;
		const seen = views.get(v);
		if (seen) return seen;
		reads.set(v, new Set());
		const view = new Proxy(v, {
			get(t, key, recv) {
				if (typeof key === "string") reads.get(t)?.add(key);
				return wrap(Reflect.get(t, key, recv));
			},
		});
		views.set(v, view);
		return view;
	};
	fn(wrap(root));
	return reads;
}

function unknownFields(
	x: unknown,
	reads: WeakMap<object, Set<string>>,
	path: string,
	out: SchemaProblem[],
): void {
	if (Array.isArray(x)) {
		x.forEach((item, i) => {
			unknownFields(item, reads, `${path}/${i}`, out);
		});
		return;
	}
	if (!isPlain(x)) return;
	const read = reads.get(x);
	if (!read) return; // under a field already reported
	for (const [k, v] of Object.entries(x)) {
		if (!read.has(k)) out.push({ path: `${path}/${k}`, message: `unknown field "${k}"` });
		else unknownFields(v, reads, `${path}/${k}`, out);
	}
}

/**
 * Validates one object: a served apiVersion/kind (removed versions named as such), the schema (types, enums,
 * required fields) and no unknown field. Answers every problem found (empty: valid).
 */
export function schemaProblems(obj: { apiVersion?: unknown; kind?: unknown }): SchemaProblem[] {
	const apiVersion = String(obj.apiVersion);
	const kind = String(obj.kind);
	const removed = REMOVED_API_VERSIONS[apiVersion];
	if (removed)
		return [{ path: "/apiVersion", message: `${apiVersion} was removed in Kubernetes ${removed}` }];
	const validate = validatorFor(apiVersion, kind);
	if (!validate)
		return [{ path: "/kind", message: `${apiVersion} ${kind} is not a kind these manifests may use` }];
	const out: SchemaProblem[] = [];
	const reads = recordReads(obj, (view) => {
		if (!validate(view))
			for (const e of validate.errors ?? [])
				out.push({
					path: e.instancePath || "/",
					message: `${e.keyword} ${JSON.stringify(e.params)}${e.message ? ` ${e.message}` : ""}`,
				});
	});
	unknownFields(obj, reads, "", out);
	return out;
}
