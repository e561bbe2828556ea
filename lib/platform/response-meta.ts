/**
 * A response over the transporter carries the call's meta back without `user` (issue 32,
 * docs/decisions/0143-response-meta-without-user.md).
 *
 * Moleculer sends the callee's whole `ctx.meta` back in every RESPONSE packet and the caller merges it into its own
 * (`Object.assign`, transit.js `responseHandler`), so an action can hand the caller what it sets there (the gateway's
 * `$statusCode`, `$responseType`, `$responseHeaders`, `$location`). `meta.user` (the caller's identity: sender, role,
 * capabilities) is the caller's own: no action sets it, and the merge of a packet without it leaves the caller's as
 * it is. So it is left out of responses: every answer over NATS was encoded, sent and decoded with a copy of it.
 */
import type { Middleware } from "moleculer";

/** Moleculer's RESPONSE packet type (moleculer/src/packets.js `PACKET_RESPONSE`). */
const PACKET_RESPONSE = "RES";

/** What the `transitPublish` hook is handed: a packet's type and payload (moleculer/src/packets.js `Packet`). */
interface OutgoingPacket {
	type: string;
	payload: { meta?: Record<string, unknown> | null } & Record<string, unknown>;
}

/** The transit's `publish`: answers once the transporter took the packet. */
type PublishFn = (packet: OutgoingPacket) => Promise<unknown>;

/**
 * The meta a response carries: `meta` without `user` (a new object: the callee's `ctx.meta` itself is left as it
 * is), or `meta` itself when it has no `user`.
 */
export function responseMeta(meta: Record<string, unknown>): Record<string, unknown> {
	if (!("user" in meta)) return meta;
	const { user: _caller, ...rest } = meta;
	return rest;
}

/**
 * Moleculer middleware (its `transitPublish` hook; moleculer.config.ts registers it with a transporter): a RESPONSE
 * packet's `payload.meta` is replaced by {@link responseMeta} of it before the packet is serialized. Requests,
 * events and every other packet are published as they are.
 */
export function ResponseMetaWithoutUser(): Middleware {
	return {
		name: "ResponseMetaWithoutUser",
		// framework boundary: Moleculer's typing declares the hook loosely; it wraps the transit's `publish`
		transitPublish: ((next: PublishFn): PublishFn =>
			(packet) => {
				const meta = packet.payload?.meta;
				if (packet.type === PACKET_RESPONSE && meta) packet.payload.meta = responseMeta(meta);
				return next(packet);
			}) as unknown as Middleware["transitPublish"],
	};
}
