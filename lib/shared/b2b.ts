/**
 * B2B / heavy multi-box consignments are not supported (spec §1): nothing
 * creates, prices, books or labels them. One rule, used by order intake on the
 * request and by the booking worker on stored orders (which internal callers
 * may have created by other channels).
 */
import type { OrderRecord } from "../contracts";
import { type ApiError, fail } from "../platform/errors";
import { isPlainObject, parseBool, parseDecimal } from "./fields";

const B2B_ARRAYS = ["boxes", "packages", "box_details", "package_details", "shipments", "mps", "child_awbs"];
const B2B_COUNTS = [
	"no_of_boxes",
	"number_of_boxes",
	"box_count",
	"boxes_count",
	"no_of_packages",
	"number_of_packages",
	"package_count",
	"packages_count",
	"quantity_of_boxes",
	"pieces",
	"no_of_pieces",
];
const B2B_FLAGS = ["is_b2b", "b2b", "is_mps", "multi_box", "multi_piece"];

/**
 * Refuses B2B / multi-box consignments (spec §1: not supported), looking at the
 * top level, `order` and `product`: any of {@link B2B_ARRAYS} present (e.g.
 * `boxes`, `packages`), a flag such as `is_b2b` set to true (`true`, `1`,
 * `"1"`, `"true"`, as lib/shared/fields.ts `parseBool` reads it), a box/package count
 * above 1 (e.g. `no_of_boxes: 2`), or `channel`/`order_type`/`shipment_mode`
 * naming `B2B`.
 *
 * `input` is a create request body (spec field names, intake) or a stored
 * {@link OrderRecord} (booking: its `channel` and `product` are read the same
 * way; it has no `order` block). Anything else is treated as an empty body.
 * @throws ApiError 400 `unsupported_channel`
 */
export function assertNotB2B(input: OrderRecord | Record<string, unknown>): void {
	const b: Record<string, unknown> = isPlainObject(input) ? input : {};
	const blocks = [b, b.order, b.product].filter(isPlainObject);
	const refuse = (why: string): ApiError => fail("unsupported_channel", why);
	for (const blk of blocks) {
		for (const k of B2B_ARRAYS) if (blk[k] !== undefined && blk[k] !== null) throw refuse(k);
		for (const k of B2B_FLAGS) if (parseBool(blk[k]) === true) throw refuse(k);
		for (const k of B2B_COUNTS) {
			const n = parseDecimal(blk[k]);
			if (n !== null && n > 1) throw refuse(k);
		}
		for (const k of ["channel", "order_type", "shipment_mode"]) {
			const v = blk[k];
			if (typeof v === "string" && v.trim().toUpperCase() === "B2B") throw refuse(k);
		}
	}
}
