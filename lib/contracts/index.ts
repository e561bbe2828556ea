/**
 * The contract between services (docs/ARCHITECTURE.md §6): every action of
 * every service (name → params and result) and every event (name → payload),
 * one file per service, merged here into {@link Actions} and {@link Events};
 * the durable channels (name → payload) in ./channels.ts
 * ({@link ChannelPayloads}).
 *
 * Call another service only through {@link call} / {@link broadcast} /
 * {@link emit} (./call.ts): they are typed by these maps, so renaming an
 * action or adding a required parameter fails the type check at every call
 * site. Services implement their part with `defineService` (lib/platform/service.ts),
 * which checks each handler against its entry here.
 *
 * Units everywhere: weights kg, dimensions cm, money in rupees on the wire
 * (integer paise in the database), timestamps ISO-8601 UTC strings.
 */
import type { BillingActions, BillingEvents } from "./billing";
import type { BookingActions, BookingEvents } from "./booking";
import type { DocumentsActions, DocumentsEvents } from "./documents";
import type { IntakeActions, IntakeEvents } from "./intake";
import type { NdrActions, NdrEvents } from "./ndr";
import type { NotificationsActions, NotificationsEvents } from "./notifications";
import type { PincodeActions, PincodeEvents } from "./pincode";
import type { PlatformActions, PlatformEvents } from "./platform";
import type { RatesActions, RatesEvents } from "./rates";
import type { WarehousesActions, WarehousesEvents } from "./warehouses";
import type { WebhooksActions, WebhooksEvents } from "./webhooks";

export * from "./billing";
export * from "./booking";
export * from "./call";
export * from "./channels";
export * from "./common";
export * from "./documents";
export * from "./intake";
export * from "./ndr";
export * from "./notifications";
export * from "./pincode";
export * from "./platform";
export * from "./rates";
export * from "./warehouses";
export * from "./webhooks";

/** Every action: `"<service>.<action>"` → `{params, result}`. */
export interface Actions
	extends PincodeActions,
		RatesActions,
		WarehousesActions,
		IntakeActions,
		BookingActions,
		BillingActions,
		DocumentsActions,
		NdrActions,
		WebhooksActions,
		NotificationsActions,
		PlatformActions {}

/** Every event: name → payload. Events are notifications (drop a cache), never state (docs/ARCHITECTURE.md §5). */
export interface Events
	extends PincodeEvents,
		RatesEvents,
		WarehousesEvents,
		IntakeEvents,
		BookingEvents,
		BillingEvents,
		DocumentsEvents,
		NdrEvents,
		WebhooksEvents,
		NotificationsEvents,
		PlatformEvents {}

export type ActionName = keyof Actions;
export type ParamsOf<N extends ActionName> = Actions[N]["params"];
export type ResultOf<N extends ActionName> = Actions[N]["result"];
export type EventName = keyof Events;
export type PayloadOf<E extends EventName> = Events[E];

/** The actions of service `S`, keyed by their local name (`"intake"` → `{getOrder: …, …}`). */
export type ServiceActions<S extends string> = {
	[K in ActionName as K extends `${S}.${infer A}` ? A : never]: Actions[K];
};
