/**
 * The manifests as the real tool renders them (issue 30; docs/decisions/0111-manifests-by-kubectl-kustomize.md):
 * `kubectl kustomize <dir>` (kustomize v5 built into kubectl), the command an ops engineer's `kubectl apply -k`
 * runs. The test command installs kubectl when it is missing (scripts/test-all.sh). A warning on stderr (a deprecated
 * field) fails the build, so the manifests stay on kustomize's current fields.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
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

/** The objects of YAML `text` read from `where`. @throws Error when a document is not a Kubernetes object */
function objectsOf(text: string, where: string): K8sObject[] {
	return parseYaml(text, where).map((o) => {
		if (!isObj(o) || typeof o.kind !== "string" || typeof o.apiVersion !== "string" || !isObj(o.metadata))
			throw new Error(`${where}: a document without apiVersion, kind and metadata`);
		return o as K8sObject;
	});
}

/** Reads the objects of one manifest file. @throws Error when a document is not a Kubernetes object */
export function readManifests(file: string): K8sObject[] {
	return objectsOf(readFileSync(file, "utf8"), file);
}

/** The kubectl the builds run: `KUBECTL` or `kubectl` on PATH. */
const KUBECTL = process.env.KUBECTL || "kubectl";

/** `kubectl version --client` as one line (e.g. `Client Version: v1.32.4 Kustomize Version: v5.5.0`). @throws Error */
export function kubectlVersion(): string {
	return execFileSync(KUBECTL, ["version", "--client"], { encoding: "utf8" }).replace(/\s+/g, " ").trim();
}

/** What `kubectl kustomize` made of a directory: its objects and what it printed on stderr (warnings). */
export interface KustomizeBuild {
	objects: K8sObject[];
	warnings: string[];
}

/**
 * Renders the kustomization in `dir` with `kubectl kustomize` and parses its objects.
 * @throws Error with kubectl's words when it is missing or the build fails
 */
export function kubectlKustomize(dir: string): KustomizeBuild {
	const r = spawnSync(KUBECTL, ["kustomize", dir], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
	if (r.error && (r.error as NodeJS.ErrnoException).code === "ENOENT")
		throw new Error(`${KUBECTL} is missing: apt-get install kubectl (scripts/test-all.sh does)`);
	if (r.error || r.status !== 0)
		throw new Error(`kubectl kustomize ${dir}: ${String(r.stderr || r.error?.message).trim()}`);
	const warnings = r.stderr
		.split("\n")
		.map((l) => l.trim())
		.filter(Boolean);
	return { objects: objectsOf(r.stdout, `kubectl kustomize ${dir}`), warnings };
}

/** The repository's k8s/ directory. */
export const K8S_DIR = resolve(dirname(__filename), "../../../k8s");
