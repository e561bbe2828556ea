/**
 * The gateway's side of the edge text rule (issue 31; the rule itself is
 * lib/platform/text-rule.ts; docs/decisions/0079-edge-text-rule.md):
 * {@link assertCleanText} refuses the params of a request whose strings break
 * it, before authentication and before any action runs.
 */
import { textViolations } from "../platform/text-rule";
import { GatewayError, gatewayFailWith } from "./errors";

export {
	CONTROL_MESSAGE,
	isCleanText,
	MAX_TEXT_DETAILS,
	SURROGATE_MESSAGE,
	textProblem,
	textViolations,
} from "../platform/text-rule";

/**
 * Throws 400 `validation_failed` (a {@link GatewayError} with `details`,
 * shaped per path by lib/gateway/errors.ts `answerFor`) when any string of
 * `params` (the params the action would receive: body, query and path
 * parameters merged) breaks the edge text rule (`opts`: see `textViolations`).
 * Called by the gateway's `onBeforeCall` hooks, before authentication and
 * before any action runs.
 */
export function assertCleanText(params: unknown, opts: { builtInKeys?: boolean } = {}): void {
	const details = textViolations(params, "", opts);
	if (details.length > 0) {
		throw gatewayFailWith("validation_failed", details, details);
	}
}
