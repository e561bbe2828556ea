/**
 * Which labels we draw and which the courier issues (spec §4.4, §7
 * `carrier_label_missing`), and how a served file is described.
 */
import type { ShipmentRecord } from "../contracts";

/**
 * Seam: true when the shipment's courier issues its own label (we must serve
 * the courier's captured file instead of drawing one). No courier integrated so
 * far does (the sandbox couriers never do); a real adapter that does will
 * record its label with `recordCourierLabel` at booking time, which makes the
 * stored row decide.
 */
export function courierIssuesOwnLabel(_shipment: ShipmentRecord): boolean {
	return false;
}

/** Media type and file extension of a stored courier label, sniffed from its magic bytes. */
export function describeFile(bytes: Uint8Array): { type: string; ext: string } {
	const head = Buffer.from(bytes.subarray(0, 8));
	if (head.subarray(0, 5).toString("latin1") === "%PDF-") return { type: "application/pdf", ext: "pdf" };
	if (head.equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
		return { type: "image/png", ext: "png" };
	return { type: "application/octet-stream", ext: "bin" };
}
