/**
 * The subset of `kustomize build` that k8s/ uses, for offline checks in CI (no kustomize binary or npm
 * implementation is available; docs/decisions/0049-kubernetes-manifests.md). A kustomization using anything
 * else fails the build, so an overlay can never silently rely on an unimplemented
 * feature.
 *
 * Supported `kustomization.yaml` fields, applied in kustomize's order (resources, then patches, then the
 * transformers of this level):
 * - `resources`: YAML files (several documents each) and directories holding a kustomization.yaml (built first);
 * - `patches`: `{path | patch, target?}`; a patch that is a YAML list is a JSON 6902 patch (fast-json-patch) applied
 *   to every resource matching `target` (`kind`, `name`; required); otherwise a strategic-merge patch applied to the
 *   resource of its own `kind` + `metadata.name` (one per YAML document of the file; an error if none): maps merge recursively, `null` deletes a key,
 *   lists whose items all have a `name` merge by name (containers, env, volumes, ports), other lists are replaced;
 * - `namespace`: sets `metadata.namespace` of namespaced resources and renames `Namespace` objects;
 * - `commonLabels`: added to every `metadata.labels`, to selectors (Service `spec.selector`, workload and PDB
 *   `spec.selector.matchLabels`, NetworkPolicy non-empty `spec.podSelector.matchLabels`) and pod template labels;
 * - `images`: `{name, newName?, newTag?, digest?}` rewrites matching container images of pod templates;
 * - `replicas`: `{name, count}` sets `spec.replicas` of the named Deployment / StatefulSet.
 */
import { readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import deepmerge from "deepmerge";
import { applyPatch, type Operation } from "fast-json-patch";
import { parseAllDocuments } from "yaml";

/** A Kubernetes object as read from YAML. */
export interface K8sObject {
	apiVersion: string;
	kind: string;
	metadata: {
		name: string;
		namespace?: string;
		labels?: Record<string, string>;
		annotations?: Record<string, string>;
		[k: string]: unknown;
	};
	[k: string]: unknown;
}

type Json = Record<string, unknown>;

/** Kinds that live outside namespaces (the ones a manifest here could name). */
const CLUSTER_SCOPED = new Set([
	"Namespace",
	"ClusterRole",
	"ClusterRoleBinding",
	"PriorityClass",
	"StorageClass",
	"IngressClass",
]);

/** Fields of kustomization.yaml this build understands. */
const KNOWN_FIELDS = new Set([
	"apiVersion",
	"kind",
	"resources",
	"patches",
	"namespace",
	"commonLabels",
	"images",
	"replicas",
]);

const WORKLOADS = new Set(["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"]);

interface Kustomization {
	resources?: string[];
	patches?: { path?: string; patch?: string; target?: { kind?: string; name?: string } }[];
	namespace?: string;
	commonLabels?: Record<string, string>;
	images?: { name: string; newName?: string; newTag?: string; digest?: string }[];
	replicas?: { name: string; count: number }[];
}

function isObj(x: unknown): x is Json {
	return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** Every YAML document of `text` as plain data (empty documents dropped). @throws Error on a YAML error */
export function parseYaml(text: string, where: string): unknown[] {
	return parseAllDocuments(text)
		.map((d) => {
			if (d.errors.length) throw new Error(`${where}: ${d.errors[0]?.message}`);
			return d.toJS() as unknown;
		})
		.filter((x) => x !== null && x !== undefined);
}

/** Reads the objects of one manifest file. @throws Error when a document is not a Kubernetes object */
export function readManifests(file: string): K8sObject[] {
	return parseYaml(readFileSync(file, "utf8"), file).map((o) => {
		if (!isObj(o) || typeof o.kind !== "string" || typeof o.apiVersion !== "string" || !isObj(o.metadata))
			throw new Error(`${file}: a document without apiVersion, kind and metadata`);
		return o as K8sObject;
	});
}

/** Merges a list by item `name` when every item of both lists is an object with one; else the patch wins. */
function mergeList(target: unknown[], source: unknown[], options?: deepmerge.Options): unknown[] {
	const named = (l: unknown[]) => l.every((x) => isObj(x) && typeof x.name === "string");
	if (!named(target) || !named(source)) return source;
	const out = [...target] as Json[];
	for (const item of source as Json[]) {
		const i = out.findIndex((x) => x.name === item.name);
		if (i < 0) out.push(item);
		else out[i] = deepmerge(out[i] as Json, item, options);
	}
	return out;
}

/** Removes keys whose patched value is `null` (strategic merge's delete). */
function dropNulls(x: unknown): unknown {
	if (Array.isArray(x)) return x.map(dropNulls);
	if (!isObj(x)) return x;
	return Object.fromEntries(
		Object.entries(x)
			.filter(([, v]) => v !== null)
			.map(([k, v]) => [k, dropNulls(v)]),
	);
}

/** Strategic-merge `patch` into `base` (see the module comment for the rules); neither is modified. */
export function strategicMerge<T extends Json>(base: T, patch: Json): T {
	return dropNulls(deepmerge(base, patch, { arrayMerge: mergeList })) as T;
}

function addLabels(where: Json, key: string, labels: Record<string, string>): void {
	where[key] = { ...((where[key] as Record<string, string> | undefined) ?? {}), ...labels };
}

/** Applies kustomize's `commonLabels` to one object (labels, selectors, pod template labels). */
function applyCommonLabels(o: K8sObject, labels: Record<string, string>): void {
	addLabels(o.metadata, "labels", labels);
	const spec = o.spec as Json | undefined;
	if (!spec) return;
	if (o.kind === "Service" && isObj(spec.selector)) addLabels(spec, "selector", labels);
	if ((WORKLOADS.has(o.kind) || o.kind === "PodDisruptionBudget") && isObj(spec.selector))
		addLabels(spec.selector, "matchLabels", labels);
	if (WORKLOADS.has(o.kind) && isObj(spec.template)) {
		const t = spec.template as Json;
		t.metadata = isObj(t.metadata) ? t.metadata : {};
		addLabels(t.metadata as Json, "labels", labels);
	}
	if (o.kind === "NetworkPolicy" && isObj(spec.podSelector)) {
		const sel = spec.podSelector as Json;
		if (isObj(sel.matchLabels) && Object.keys(sel.matchLabels).length) addLabels(sel, "matchLabels", labels);
	}
}

/** Rewrites container images named `img.name` (with or without tag / digest) in a pod template. */
function applyImage(
	o: K8sObject,
	img: { name: string; newName?: string; newTag?: string; digest?: string },
): void {
	const podSpec = ((o.spec as Json | undefined)?.template as Json | undefined)?.spec as Json | undefined;
	if (!podSpec) return;
	for (const key of ["containers", "initContainers"]) {
		for (const c of (podSpec[key] as Json[] | undefined) ?? []) {
			const image = String(c.image ?? "");
			const name = image.split("@")[0]?.replace(/:[^:/]+$/, "");
			if (name !== img.name) continue;
			const oldTag = image.includes("@") ? "" : (/:([^:/]+)$/.exec(image)?.[1] ?? "");
			const base = img.newName ?? img.name;
			c.image = img.digest
				? `${base}@${img.digest}`
				: `${base}${img.newTag ? `:${img.newTag}` : oldTag ? `:${oldTag}` : ""}`;
		}
	}
}

/**
 * Builds the kustomization in `dir` (a directory holding kustomization.yaml) into its list of objects, like
 * `kustomize build dir`, within the supported subset (module comment).
 * @throws Error on an unsupported field, a missing file, a patch that matches nothing, or two objects with the
 *   same kind, namespace and name
 */
export function kustomizeBuild(dir: string): K8sObject[] {
	const file = join(dir, "kustomization.yaml");
	const [k] = parseYaml(readFileSync(file, "utf8"), file) as [Json & Kustomization];
	for (const key of Object.keys(k))
		if (!KNOWN_FIELDS.has(key))
			throw new Error(`${file}: kustomization field "${key}" is not supported here`);
	const objs: K8sObject[] = [];
	for (const r of k.resources ?? []) {
		const p = resolve(dir, r);
		objs.push(...(statSync(p).isDirectory() ? kustomizeBuild(p) : readManifests(p)));
	}
	for (const [i, p] of (k.patches ?? []).entries()) {
		const where = `${file} patches[${i}]`;
		const text = p.path ? readFileSync(resolve(dir, p.path), "utf8") : p.patch;
		if (!text) throw new Error(`${where}: needs path or patch`);
		const docs = parseYaml(text, where);
		const [body] = docs;
		if (Array.isArray(body)) {
			if (!p.target?.kind || !p.target.name)
				throw new Error(`${where}: a JSON 6902 patch needs target kind and name`);
			const hits = objs.filter((o) => o.kind === p.target?.kind && o.metadata.name === p.target?.name);
			if (!hits.length) throw new Error(`${where}: no ${p.target.kind} ${p.target.name}`);
			for (const o of hits) {
				const next = applyPatch(structuredClone(o), body as Operation[], true, false).newDocument;
				objs[objs.indexOf(o)] = next;
			}
			continue;
		}
		for (const doc of docs) {
			if (!isObj(doc) || !isObj(doc.metadata))
				throw new Error(`${where}: neither a JSON 6902 list nor objects with kind and metadata.name`);
			const name = (doc.metadata as Json).name;
			const at = objs.findIndex((o) => o.kind === doc.kind && o.metadata.name === name);
			if (at < 0) throw new Error(`${where}: no ${String(doc.kind)} ${String(name)}`);
			objs[at] = strategicMerge(objs[at] as K8sObject, doc);
		}
	}
	for (const o of objs) {
		if (k.namespace) {
			if (o.kind === "Namespace") o.metadata.name = k.namespace;
			else if (!CLUSTER_SCOPED.has(o.kind)) o.metadata.namespace = k.namespace;
		}
		if (k.commonLabels) applyCommonLabels(o, k.commonLabels);
		for (const img of k.images ?? []) applyImage(o, img);
		for (const r of k.replicas ?? [])
			if ((o.kind === "Deployment" || o.kind === "StatefulSet") && o.metadata.name === r.name)
				(o.spec as Json).replicas = r.count;
	}
	const seen = new Set<string>();
	for (const o of objs) {
		const id = `${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`;
		if (seen.has(id)) throw new Error(`${file}: ${id} defined twice`);
		seen.add(id);
	}
	return objs;
}

/** The directory of this module's k8s/ tree (repository root + k8s). */
export const K8S_DIR = resolve(dirname(__filename), "../../../k8s");
