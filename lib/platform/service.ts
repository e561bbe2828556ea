/**
 * `defineService`: a Moleculer service schema checked against its contract
 * (lib/contracts), with `this` inferred (in the spirit of
 * treatwell/moleculer-essentials' `wrapService`), so no service hand-writes a
 * `This` type.
 *
 * ```ts
 * interface IntakeVars { warehouseCache: WarehouseCache }   // state set in created()
 * export default defineService<IntakeVars>()({
 *   name: "intake",
 *   mixins: [DbMixin("intake", INTAKE_MIGRATIONS)],        // adds this.db, this.dbSchema
 *   methods: { ... },
 *   actions: { getOrder: { params: {...}, async handler(ctx) { ... } }, ... },
 *   events: { "warehouses.changed"(ctx) { ... } },
 *   created() { this.warehouseCache = new WarehouseCache(5000); },
 * });
 * ```
 *
 * What is checked:
 * - `actions` has exactly the actions the contract lists for `name`
 *   (`ServiceActions<name>`): a missing or an extra action is a type error;
 *   each handler's `ctx.params` is the contract's params and its return value
 *   must be the contract's result.
 * - `events` handlers get the contract's payload for that event name.
 * - `this` in handlers, methods and lifecycle handlers is
 *   `Service<settings> & mixins' members & Vars & methods`.
 *
 * Order of keys: name, mixins, settings, methods, actions, events, then the
 * lifecycle handlers. `methods` come BEFORE `actions` and `events` (a
 * departure from the design card's order): TypeScript infers the methods'
 * type in source order, and a handler written before `methods` that uses
 * `this` would see no methods ("Property '<method>' does not exist on type
 * ServiceThis<…>") unless it declared its return type.
 *
 * The runtime schema is the object given (plus `hiddenActions` as `false`
 * entries): nothing is wrapped, so Moleculer behaves exactly as without it.
 */
import type {
	ActionParams,
	ActionSchema,
	Context,
	Service,
	ServiceSchema,
	ServiceSettingSchema,
} from "moleculer";
import type { CallMeta, ChannelSubscriptions, EventName, PayloadOf, ServiceActions } from "../contracts";

/**
 * A mixin that adds members `V` to the services using it (e.g. DbMixin adds
 * `db` and `dbSchema`). `V` is a type-only marker; at run time it is a plain
 * partial schema.
 */
export interface Mixin<V extends object = object> {
	/** type-only marker of the members this mixin adds */
	readonly __adds?: V;
	settings?: object;
	actions?: ServiceSchema["actions"];
	events?: ServiceSchema["events"];
	methods?: ServiceSchema["methods"];
	created?(this: Service & V): void;
	started?(this: Service & V): void | Promise<void>;
	stopped?(this: Service & V): void | Promise<void>;
}

type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void
	? I
	: never;

/** Members the mixins of a tuple add. */
export type MixinVars<Mx extends readonly Mixin[]> = [Mx[number]] extends [never]
	? unknown
	: UnionToIntersection<Mx[number] extends Mixin<infer V> ? V : never>;

/** `this` inside a service defined with {@link defineService}. */
export type ServiceThis<S, M, V> = Service<S> & V & M;

/**
 * Any method of a service: the bound of the methods map `M`. `never[]` parameters accept every method (a
 * parameter list is contravariant); calls are typed by `M`'s own members, inferred from the schema.
 */
type AnyMethod = (...args: never[]) => unknown;

/** One action implementing contract entry `C`. */
export type ActionDef<C> = C extends { params: infer P; result: infer R }
	? Omit<ActionSchema, "handler" | "params"> & {
			/** fastest-validator schema of the params (internal actions; gateway-facing ones validate in the handler) */
			params?: ActionParams;
			handler(ctx: Context<P, CallMeta>): R | Promise<R>;
		}
	: never;

/** One event handler for payload `P`: a function, or `{handler, group?, …}`. */
export type EventDef<P> =
	| ((ctx: Context<P, CallMeta>) => void | Promise<void>)
	| {
			group?: string;
			handler(ctx: Context<P, CallMeta>): void | Promise<void>;
	  };

/** The schema {@link defineService} accepts for service `N`. */
export interface TypedServiceSchema<N extends string, S, M, Mx extends readonly Mixin[]> {
	name: N;
	/** Actions of mixins that this service must not expose (e.g. moleculer-web's `addRoute`). */
	hiddenActions?: readonly string[];
	mixins?: Mx;
	settings?: S;
	dependencies?: ServiceSchema["dependencies"];
	actions: { [K in keyof ServiceActions<N>]: ActionDef<ServiceActions<N>[K]> };
	events?: { [E in EventName]?: EventDef<PayloadOf<E>> };
	/** durable channel subscriptions, typed by lib/contracts/channels.ts (a handler receives its channel's payload) */
	channels?: ChannelSubscriptions;
	methods?: M;
	/** Moleculer's `merged` hook: the schema after its mixins are applied, before its actions are made (may remove some) */
	merged?(schema: ServiceSchema): void;
	created?(): void;
	started?(): void | Promise<void>;
	stopped?(): void | Promise<void>;
}

/**
 * Defines a service against its contract. `V` is the state the service sets
 * in `created()` (its own members; the mixins' members are inferred). Returns
 * the Moleculer schema.
 */
export function defineService<V extends object = Record<never, never>>() {
	return <
		const N extends string,
		S extends object = ServiceSettingSchema,
		M extends Record<string, AnyMethod> = Record<never, never>,
		const Mx extends readonly Mixin[] = [],
	>(
		schema: TypedServiceSchema<N, S, M, Mx> & ThisType<ServiceThis<S, M, MixinVars<Mx> & V>>,
	): ServiceSchema<S> => {
		const { hiddenActions, ...rest } = schema;
		const actions: Record<string, unknown> = { ...rest.actions };
		for (const a of hiddenActions ?? []) actions[a] = false;
		// The typed schema is a Moleculer schema whose handlers declare narrower
		// `this`/`ctx` types than Moleculer's own `any`-typed ones.
		return { ...rest, actions } as ServiceSchema<S>;
	};
}
