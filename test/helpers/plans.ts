/**
 * Reading PostgreSQL query plans in tests (`EXPLAIN (ANALYZE, FORMAT JSON)`): the index tests of outboxes and
 * booking attempts check which nodes a plan has and which indexes it scanned.
 */

/** Plan nodes of an EXPLAIN (FORMAT JSON) tree, depth first (sub-plans included). */
export function nodesOf(plan: Record<string, unknown>): Record<string, unknown>[] {
	const kids = (plan.Plans as Record<string, unknown>[] | undefined) ?? [];
	return [plan, ...kids.flatMap(nodesOf)];
}
