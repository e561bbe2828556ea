/**
 * Typed calls and typed fakes for tests (issue 26 "tests through the
 * contracts"): the same contract (lib/contracts `Actions`) that types the
 * services' own calls types what a test sends, what it reads back, and what a
 * fake service standing in for a real one answers. Renaming an action, adding
 * a required parameter or changing a result shape fails `npm run typecheck`
 * in the tests as it does in the services.
 *
 * - {@link callAs}: `broker.call` with the action's params and result types
 *   (`opts` is Moleculer's calling options: `as(sender, role)` of
 *   ./broker.ts for a call made by a user, `{nodeID}`, `{timeout}`, …).
 * - {@link callRaw}: the same with params NOT checked, for tests that send
 *   what the contract forbids on purpose (validation, coercion, bad types).
 * - {@link fakeService}: a service schema standing in for service `S`, each
 *   handler typed by its contract entry.
 */
import type { ActionSchema, CallingOptions, Context, ServiceBroker, ServiceSchema } from "moleculer";
import type { ActionName, CallMeta, ParamsOf, ResultOf, ServiceActions } from "../../lib/contracts";

/**
 * The arguments after the action name: params (optional when the action
 * takes none: `Record<string, never>`, so an omitted params stays omitted as
 * in a bare `broker.call(name)`), then the calling options.
 */
export type CallArgs<A extends ActionName> =
	Record<string, never> extends ParamsOf<A>
		? [params?: ParamsOf<A>, opts?: CallingOptions]
		: [params: ParamsOf<A>, opts?: CallingOptions];

/**
 * Calls `action` on `broker` (or from inside a handler, on its Context) with
 * params checked against the contract; answers the contract's result type.
 * Rejections are the callee's, unchanged (no 503 mapping: that is
 * lib/contracts/call.ts's, for services).
 */
export function callAs<A extends ActionName>(
	via: ServiceBroker | Context,
	action: A,
	...[params, opts]: CallArgs<A>
): Promise<ResultOf<A>> {
	return via.call(action, params, opts) as Promise<ResultOf<A>>;
}

/**
 * {@link callAs} with params NOT checked against the contract: for a test
 * that sends what the contract forbids on purpose (a string where a number
 * goes, a missing field, no params at all). The action name and the result
 * type still come from the contract.
 */
export function callRaw<A extends ActionName>(
	via: ServiceBroker | Context,
	action: A,
	params?: unknown,
	opts?: CallingOptions,
): Promise<ResultOf<A>> {
	return via.call(action, params as object, opts) as Promise<ResultOf<A>>;
}

/** The services named in the contract (`"intake"`, `"rates"`, …). */
export type ContractService = ActionName extends infer A
	? A extends `${infer S}.${string}`
		? S
		: never
	: never;

/** A fake's handler for contract entry `C`: the contract's params in, the contract's result out. */
export type FakeHandler<C> = C extends { params: infer P; result: infer R }
	? (ctx: Context<P, CallMeta>) => R | Promise<R>
	: never;

/** One action of a fake: its handler, or a schema (`access`, `params`, …) with that handler. */
export type FakeAction<C> = FakeHandler<C> | (Omit<ActionSchema, "handler"> & { handler: FakeHandler<C> });

/** The actions a fake of service `S` may implement (any subset of the contract's). */
export type FakeActions<S extends ContractService> = {
	[K in keyof ServiceActions<S>]?: FakeAction<ServiceActions<S>[K]>;
};

/**
 * A service schema standing in for service `S` with the given actions, each
 * one's params and result checked against `S`'s contract (so a fake cannot
 * answer a shape the real service never would, the way a fake intake once
 * did and failed CI). `opts.before(action)` runs before every handler (it
 * may throw: e.g. a fake "down" switch).
 */
export function fakeService<S extends ContractService>(
	name: S,
	actions: FakeActions<S>,
	opts: { before?: (action: string) => void } = {},
): ServiceSchema {
	const out: Record<string, ActionSchema> = {};
	for (const [key, def] of Object.entries(
		actions as Record<string, ((ctx: Context) => unknown) | ActionSchema | undefined>,
	)) {
		if (!def) continue;
		const schema: ActionSchema = typeof def === "function" ? { handler: def } : { ...def };
		const handler = schema.handler as (ctx: Context) => unknown;
		const before = opts.before;
		out[key] = before
			? {
					...schema,
					handler(ctx: Context) {
						before(`${name}.${key}`);
						return handler(ctx);
					},
				}
			: schema;
	}
	return { name, actions: out };
}
