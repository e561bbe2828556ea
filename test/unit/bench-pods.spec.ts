/**
 * The bulk bench's pod weights (bench/pods.ts; issue 10): kubelet's conversions from a CPU request to
 * cgroup v1 `cpu.shares` and cgroup v2 `cpu.weight`, and the requests read from the Deployments'
 * manifests (test/chaos/rss.ts `manifestCpuRequest`), so the bench weighs its processes as the
 * manifests say.
 */
import { strict as assert } from "node:assert";
import { cpuShares, cpuWeight, requestOf } from "../../bench/pods";
import { DEPLOYMENTS, manifestCpuRequest, quantityMillicores } from "../chaos/rss";

describe("bench pods: CPU requests to cgroup weights", () => {
	it("reads Kubernetes CPU quantities in millicores", () => {
		assert.equal(quantityMillicores("250m"), 250);
		assert.equal(quantityMillicores("1"), 1000);
		assert.equal(quantityMillicores("0.5"), 500);
		assert.equal(quantityMillicores(2), 2000);
		assert.throws(() => quantityMillicores("250Mi"), /unreadable CPU quantity/);
		assert.throws(() => quantityMillicores(""), /unreadable CPU quantity/);
	});

	it("converts a request as kubelet does (MilliCPUToShares, CpuSharesToCpuWeight)", () => {
		// shares = millicores × 1024 / 1000 (integer), at least 2
		assert.equal(cpuShares(1000), 1024);
		assert.equal(cpuShares(250), 256);
		assert.equal(cpuShares(200), 204);
		assert.equal(cpuShares(1), 2);
		assert.equal(cpuShares(0), 2);
		// weight = 1 + (shares − 2) × 9999 / 262142 (integer)
		assert.equal(cpuWeight(1000), 39);
		assert.equal(cpuWeight(200), 8);
		assert.equal(cpuWeight(0), 1);
		assert.equal(cpuWeight(256_000), 10_000);
	});

	it("takes each Deployment's CPU request from its manifest", () => {
		for (const d of DEPLOYMENTS) assert.ok(manifestCpuRequest(d) > 0, `${d} has a CPU request`);
		assert.equal(manifestCpuRequest("intake-bulk"), 200);
		// the bench's API process runs four Deployments' services: their requests add up
		assert.equal(
			requestOf(["gateway", "pincode", "rates", "warehouses"]),
			["gateway", "pincode", "rates", "warehouses"].reduce((sum, d) => sum + manifestCpuRequest(d), 0),
		);
		assert.throws(() => manifestCpuRequest("no-such-deployment"), /ENOENT/);
	});
});
