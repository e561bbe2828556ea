/**
 * Kubernetes manifests (k8s/): one file per service with a Deployment and an
 * HPA; checks what `kubectl apply --dry-run` would not: selector/label
 * agreement, one service per pod matching the file, probes on declared ports,
 * a grace period longer than the broker's graceful-stop budget, no service
 * links (Moleculer's runner reads env such as TRANSPORTER).
 */
import { strict as assert } from "node:assert";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { ALL_SERVICES, loadConfig } from "../../lib/config";
import brokerOptions from "../../moleculer.config";

const dir = join(__dirname, "../../k8s");
const docs = readdirSync(dir)
	.filter((f) => f.endsWith(".yaml"))
	.flatMap((f) =>
		parseAllDocuments(readFileSync(join(dir, f), "utf8")).map((d) => ({ file: f, obj: d.toJS() as any })),
	);

describe("k8s manifests", () => {
	const deployments = docs.filter((d) => d.obj?.kind === "Deployment");

	it("has one file with a Deployment and an HPA for every deployable service", () => {
		for (const s of ALL_SERVICES.filter((x) => x !== "devauth")) {
			const inFile = docs.filter((d) => d.file === `${s}.yaml`).map((d) => d.obj.kind);
			assert.ok(inFile.includes("Deployment"), `${s}.yaml lacks a Deployment`);
			assert.ok(inFile.includes("HorizontalPodAutoscaler"), `${s}.yaml lacks an HPA`);
		}
	});

	it("selectors match template labels and each pod runs exactly its own service", () => {
		for (const { file, obj } of deployments) {
			const sel = obj.spec.selector.matchLabels;
			for (const [k, v] of Object.entries(sel)) assert.equal(obj.spec.template.metadata.labels[k], v, file);
			const c = obj.spec.template.spec.containers[0];
			const services = c.env.find((e: any) => e.name === "SERVICES").value;
			assert.equal(`${services}.yaml`, file);
			assert.ok((ALL_SERVICES as readonly string[]).includes(services));
			assert.match(obj.metadata.name, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
			assert.equal(obj.spec.template.spec.enableServiceLinks, false, file);
		}
	});

	it("probes point at declared container ports", () => {
		for (const { file, obj } of deployments) {
			const c = obj.spec.template.spec.containers[0];
			const names = new Set(c.ports.map((p: any) => p.name));
			for (const probe of [c.readinessProbe, c.livenessProbe])
				assert.ok(names.has(probe.httpGet.port), `${file}: ${probe.httpGet.port}`);
		}
	});

	it("grants a grace period longer than the broker's graceful stop", () => {
		const o = brokerOptions(loadConfig());
		const budgetMs = (o.tracking?.shutdownTimeout ?? 0) + (o.registry?.stopDelay ?? 0);
		for (const { file, obj } of deployments)
			assert.ok(obj.spec.template.spec.terminationGracePeriodSeconds * 1000 > budgetMs, file);
	});

	it("every HPA and Service targets an existing Deployment / pod label", () => {
		const names = new Set(deployments.map((d) => d.obj.metadata.name));
		for (const { file, obj } of docs.filter((d) => d.obj?.kind === "HorizontalPodAutoscaler")) {
			assert.ok(names.has(obj.spec.scaleTargetRef.name), file);
			assert.ok(obj.spec.minReplicas <= obj.spec.maxReplicas, file);
		}
		for (const { file, obj } of docs.filter((d) => d.obj?.kind === "Service")) {
			const target = deployments.find((d) => d.obj.metadata.name === obj.metadata.name);
			assert.ok(target, file);
			for (const [k, v] of Object.entries(obj.spec.selector))
				assert.equal(target.obj.spec.template.metadata.labels[k], v);
		}
	});
});
