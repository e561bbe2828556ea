/**
 * Which labels we draw and which the courier issues (spec §4.4, §7
 * `carrier_label_missing`), and how a served file is described.
 */
import type { ShipmentRecord } from "../contracts";

/**
 * True when the shipment's courier issues its own label, so we serve the
 * courier's captured file instead of drawing one (and answer 409
 * `carrier_label_missing` until it is captured). Driven by data: booking marks
 * the shipment `courier_label` when it is booked with a courier whose adapter
 * setting says it issues its own label (lib/couriers `issuesOwnLabel`; the
 * sandbox: `SANDBOX_OWN_LABEL_COURIERS`, default `sbx-lite`), and has documents
 * capture the file then (`documents.captureCourierLabel`). A stored row of the
 * AWB decides before this (lib/documents/store.ts).
 */
export function courierIssuesOwnLabel(shipment: Pick<ShipmentRecord, "courier_label">): boolean {
	return shipment.courier_label === true;
}

/** Magic bytes of the file types a label can be served as. */
const MAGIC: Record<string, { ext: string; matches: (head: Buffer) => boolean }> = {
	"application/pdf": { ext: "pdf", matches: (h) => h.subarray(0, 5).toString("latin1") === "%PDF-" },
	"image/png": {
		ext: "png",
		matches: (h) => h.equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
	},
};

/**
 * Media type and file extension of a stored courier label: `declared` (the
 * type the courier answered, stored with the file) when it is a PDF or PNG
 * type and the bytes start as that type does; else sniffed from the magic
 * bytes (PDF, PNG); else `application/octet-stream` / `bin` (never a type a
 * browser would render as a page).
 */
export function describeFile(bytes: Uint8Array, declared?: string | null): { type: string; ext: string } {
	const head = Buffer.from(bytes.subarray(0, 8));
	const d = declared ? MAGIC[declared.split(";")[0].trim().toLowerCase()] : undefined;
	if (declared && d?.matches(head)) return { type: declared.split(";")[0].trim().toLowerCase(), ext: d.ext };
	for (const [type, m] of Object.entries(MAGIC)) if (m.matches(head)) return { type, ext: m.ext };
	return { type: "application/octet-stream", ext: "bin" };
}
